"""How each result reads, one module per result: its summary, its report (title, headline facts,
table), its verdict sentences and its JSON document. The results' own methods (``summary()``,
``to_dict()``, ``verdicts()``, ``to_markdown()``...) import these functions when called."""
