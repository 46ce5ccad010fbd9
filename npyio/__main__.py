"""``python -m npyio``: the npyio command line."""

import sys

from npyio.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
