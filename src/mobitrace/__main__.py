import os
import sys

# pandera imports hypothesis (and with it pytest) at its first validation when
# it is installed, as the test suite installs it, for data synthesis, which no
# command does, at a cost in every pipeline command. An import of a module that is
# None in sys.modules fails, and pandera then goes without (setdefault: a
# process that already imported it keeps it).
sys.modules.setdefault("hypothesis", None)

if os.environ.get("MOBITRACE_WARM"):  # a run's warm server (mobitrace.warm) runs us in a fork of it
    from mobitrace import warm

    code = warm.delegate("mobitrace", sys.argv[1:])
    if code is not None:
        sys.exit(code)

from mobitrace.cli import main  # noqa: E402

sys.exit(main())
