"""dpref: the command line that fronts ``reference``, ``proofs_checks`` and ``empirical_dp``."""

__version__ = "0.1.0"
