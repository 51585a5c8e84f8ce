"""The paper's run grid as data (``paper.yaml``) and the command that runs it: ``plan`` turns a
grid into ``inspect eval-set`` commands, ``run`` executes them one process at a time."""
