from kueueplan.cli import run

run()
