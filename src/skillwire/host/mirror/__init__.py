"""A verified copy of a server's skills in a directory, kept crash-safe and compared with its record.

The library behind `skillwire pull --to DIR` and `skillwire pull --for HOST` (syncing into a host's own
skills folder); the command line (`cli/pull.py`, `cli/hostsync.py`) only parses arguments, asks and prints.
Modules, each importing only those before it:

- `lock`: `skills.lock`, what was written, from which server, with every digest.
- `swap`: the crash-safe replacement of a folder (two renames, a synced journal), the repair of what
  an interrupted run left (`recover_interrupted`), and carrying the person's files into a new copy.
- `layout`: where a skill's files go, or why they cannot be written there (`plan_skill`, `plan_entries`).
- `drift`: the one status set of both `--check`s (`CheckStatus`); the lock against the server
  (`lock_changes`); the one disk-versus-record check (`disk_problem`, returning a `DiskProblem`); whose
  file is this (`unrecorded_files`: what no record lists is the person's); and the locked signatures judged
  by the trust policy (`check_signatures`). File sets are compared by `core/manifest.diff_file_sets`.
- `writer`: one planned skill fetched verified, staged, swapped in and locked (`Mirror`).
- `select`: which skills a run writes, named or listed, failures as data (`select_entries`).
- `puller`: `pull --to`'s algorithm (`Puller`: open, plan, write, finish) and `pull --check` (`check_lock`).
- `hostdirs`: each agent host's documented skills folder.
- `sync`: `pull --for HOST`, each write a load (`HostSync.run`, the ownership record, prune) and its
  `--check` (`check`).
"""
