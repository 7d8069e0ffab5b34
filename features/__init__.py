"""Feature engine: streaming analyzers that turn a trace into XAPP/MICA/warp-level features."""
