import sys

from .presentation.cli.main import main

sys.exit(main())
