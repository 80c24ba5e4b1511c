"""dpref empirical_dp: privacy audits (DESIGN.md, empirical_dp/).

Neighbouring-dataset distinguishing attacks with rigorous epsilon lower bounds, compared with what
the accountant claims. The package exists so that the distribution's layout is fixed from the
start; its scenarios, attacks, bounds and executors are built by the audit work (issue 4) and are
not available yet — importing it gives nothing to run.
"""
