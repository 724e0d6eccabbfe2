"""Everything a person reads: figures (``plots``), text, Markdown, LaTeX and HTML reports
(``reports``), verdicts and number formatting (``verdicts``), JSON documents
(``serialize``). Models return results; this subpackage renders them and never computes a
posterior. The command line is :mod:`bayescomp.cli`, the layer above."""
