"""Everything a person reads: figures (``plots``), text, Markdown, LaTeX and HTML reports
(``reports``), verdicts and number formatting (``verdicts``), JSON documents
(``serialize``) and the command line (``cli``). Models return results; this subpackage
renders them and never computes a posterior."""
