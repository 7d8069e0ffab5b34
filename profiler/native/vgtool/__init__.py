"""C source of Portcast's Valgrind tool (a package only so that installers ship the .c files)."""
