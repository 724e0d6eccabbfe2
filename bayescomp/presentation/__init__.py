"""Everything a person reads: figures (``plots``), each result's summary, report and JSON
document (``results``), the Markdown, LaTeX and HTML renderers and text tables (``reports``)
and the verdict sentences (``verdicts``); numbers are written by
:mod:`bayescomp.formatting`. Models return results; this subpackage renders them and never
computes a posterior. The command line is :mod:`bayescomp.cli`, the layer above."""
