from kueueplan.cli import main

main()
