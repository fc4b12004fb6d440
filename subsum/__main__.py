"""`python -m subsum ...` runs the CLI; `spark-submit .../subsum/__main__.py match --engine spark ...` too."""

from subsum.cli import main

if __name__ == "__main__":
    main()
