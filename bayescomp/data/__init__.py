"""Scores in, before any model: the :class:`~bayescomp.data.scores.Scores` container and its
readers (``scores``), scikit-learn results read into it (``sklearn_io``), the built-in
collection (``datasets``) and the cross-validation protocols that produce scores
(``protocols``: one module per protocol). Nothing here samples or draws."""
