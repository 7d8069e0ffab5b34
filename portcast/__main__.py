from portcast.cli import main

main()
