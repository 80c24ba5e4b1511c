"""Test configuration: Hypothesis runs derandomized in CI so that a green build is reproducible.

Locally the default profile explores fresh examples on every run; set HYPOTHESIS_PROFILE=ci (CI sets
CI=true) to reproduce CI exactly.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile("ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
