from kg.cli.app import app

app()
