"""portcast.h, the C region markers (a package only so that installers ship the header)."""
