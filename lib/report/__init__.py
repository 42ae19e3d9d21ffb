"""Report-only code: what exists to reproduce Mustafa's 3F8 lab report, and nothing else
(import a module: ``from lib.report import printed``). The teaching core does not import it.

* :mod:`lib.report.printed` -- the report's settings and printed figures, quoted in one place,
  and the report-versus-ours tables;
* :mod:`lib.report.ml_lab` -- the maximum-likelihood lab of its appendix A: the training paths
  of one classifier on many seeded random splits (the split study), and the scores of one fit.
"""
