from subsum.cli import main

main()
