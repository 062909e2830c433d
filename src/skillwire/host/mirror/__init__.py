"""A verified copy of a server's skills in a directory, kept crash-safe and compared with its lock.

The engine behind `skillwire pull` (and anything else that writes skills to disk, such as syncing into a
host's own skills folder); the command line only parses arguments and prints. Modules, each importing
only those before it:

- `lock`: `skills.lock`, what was written, from which server, with every digest.
- `swap`: the crash-safe replacement of a folder (two renames, a synced journal) and the repair of what
  an interrupted run left (`recover_interrupted`).
- `layout`: where a skill's files go, or why they cannot be written there (`plan_skill`, `plan_entries`).
- `drift`: the lock against the server (`lock_changes`), the one disk-versus-lock check
  (`disk_problem`) and the locked signatures judged by the trust policy (`check_signatures`).
- `writer`: one planned skill fetched verified, staged, swapped in and locked (`Mirror`).
"""
