"""What other packages may use of the server's SDK seam: a request's per-client connection, and the one-pass
reply writer for an HTTP app (the bridge's, as `skillwire serve`'s).

`server/_sdk.py` stays the one place skillwire touches the SDK's private parts (and says why for each);
this module only names the two of its functions that are meant for use outside `server/`, so no other
package imports a private module.
"""

from __future__ import annotations

from skillwire.server._sdk import connection_of as connection_of
from skillwire.server._sdk import use_one_pass_replies as use_one_pass_replies

__all__: list[str] = []  # internal: for the bridge, not the package root's public names
