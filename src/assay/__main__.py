import sys

from assay.cli.main import main

sys.exit(main())
