from kg.cli.app import main

main()
