"""Leaderboard submissions: ``build`` (logs -> a canonical, self-hashed results file),
``verify`` (the file, and with its logs every claim recomputed), ``board`` (submissions ->
leaderboard.md, leaderboard.json and a self-contained index.html, from ``board.html``)."""
