"""skillwire: the MCP Skills extension (SEP-2640, `io.modelcontextprotocol/skills`) for Python.

The package root is the API: every public class, function and exception is importable from here,
and shows as `skillwire.X` in reprs and tracebacks.

    from skillwire import SkillCatalog, SkillsExtension

    skills = SkillsExtension(SkillCatalog(["./skills"]))
    mcp = MCPServer("docs", extensions=[skills], middleware=skills.middleware(), subscriptions=skills.subscriptions)
    # or skills.attach(server): any mcp MCPServer or low-level Server already built

    from skillwire import ApproveAll, SkillHost, UnlistedFile

    async with SkillHost(policy=ApproveAll()) as host:
        await host.add_server("work", "http://127.0.0.1:8765/mcp")
        skill = await host.load("work", "skill://pdf-processing/SKILL.md")

What is public follows one rule (tests/test_public_api.py checks it): every class and function a
module lists in its `__all__` (outside `skillwire.cli`, the command line), and every
`SkillwireError` subclass. To make a new name public, add it to its module's `__all__` and here, in
the `TYPE_CHECKING` imports, `__all__` and `_EXPORTS` (tests/test_public_api.py checks the three agree).
"""

import typing

from skillwire._version import __version__

if typing.TYPE_CHECKING:  # what type checkers and editors see; at run time `__getattr__` imports on first use
    from skillwire.catalog.catalog import (
        SkillCatalog,
    )
    from skillwire.catalog.digests import (
        DigestCache,
    )
    from skillwire.catalog.filesystem import (
        SkillRoot,
    )
    from skillwire.catalog.persist import (
        SnapshotStore,
    )
    from skillwire.checks.hazards import (
        Hazard,
        HazardKind,
        interop_hazards,
        yaml_interop_hazards,
    )
    from skillwire.checks.links import (
        check_links,
    )
    from skillwire.checks.lint import (
        Finding,
        LintedSkill,
        LintReport,
        SkillMdCheck,
        check_skill_md,
        lint_path,
    )
    from skillwire.client.bounds import (
        WireBounds,
    )
    from skillwire.client.limits import (
        ClientLimits,
    )
    from skillwire.client.skills import (
        DirectoryItem,
        EntryProblem,
        Listing,
        ResourceContent,
        SkillsClient,
    )
    from skillwire.core.entry import (
        SkillEntry,
    )
    from skillwire.core.errors import (
        ApprovalDenied,
        ApprovalStoreError,
        AwsCredentialsError,
        BindError,
        BlobUnavailable,
        BridgeConfigError,
        CodeExecutionDenied,
        ConnectionLost,
        CrossOriginReadDenied,
        DigestMismatch,
        DynamicSkillDeclined,
        ExtensionNotDeclared,
        FrontmatterError,
        FrontmatterMismatch,
        HostError,
        InvalidAudienceRule,
        InvalidCursor,
        InvalidEntry,
        InvalidIndex,
        InvalidName,
        InvalidResponse,
        InvalidServerEntry,
        InvalidSkillURI,
        LimitExceeded,
        LintPathError,
        LockError,
        NotASkill,
        RequestTimeout,
        ResponseTooLarge,
        SdkShapeChanged,
        ServedFileChanged,
        ServerError,
        SignatureError,
        SignatureInvalid,
        SignatureMissing,
        SigningError,
        SizeMismatch,
        SkillChanged,
        SkillError,
        SkillNotActive,
        SkillNotFound,
        SkillwireError,
        StoreError,
        UnknownOrigin,
        UnlistedFile,
        UnsafeCacheLocation,
        UnsafeFile,
        UntrustedSigner,
        UpstreamUnavailable,
        VerificationFailed,
    )
    from skillwire.core.json import (
        frontmatter_differences,
    )
    from skillwire.core.manifest import (
        ManifestDiff,
        ManifestFile,
    )
    from skillwire.core.protocol import (
        EXTENSION_ID,
    )
    from skillwire.core.skill_md import (
        SkillDocument,
        parse_skill_md,
        split_skill_md,
    )
    from skillwire.core.yaml import (
        frontmatter_size_problem,
        parse_frontmatter,
    )
    from skillwire.host.active import (
        ActiveSkill,
        DirectoryView,
    )
    from skillwire.host.approvals import (
        ApprovalStore,
    )
    from skillwire.host.cache import (
        ContentCache,
    )
    from skillwire.host.framing import (
        TaggedContent,
    )
    from skillwire.host.host import (
        SkillHost,
    )
    from skillwire.host.identity import (
        SkillRef,
    )
    from skillwire.host.origins import (
        LocalOrigin,
        ServerOrigin,
    )
    from skillwire.host.policy import (
        ApprovalRequest,
        ApproveAll,
        CodeExecution,
        CrossOriginRead,
        DenyAll,
        Policy,
    )
    from skillwire.host.registry import (
        Collision,
        RegisteredSkill,
    )
    from skillwire.host.tools import (
        SkillTools,
        ToolResult,
    )
    from skillwire.host.trust import (
        TrustPolicy,
    )
    from skillwire.server.app import (
        bind_http_socket,
        build_server,
        event_loop_options,
        http_app,
        serve_http,
        serve_stdio,
        uvicorn_config,
    )
    from skillwire.server.extension import (
        SkillsExtension,
    )
    from skillwire.server.options import (
        ServedSkills,
        ServeOptions,
    )

__all__ = [
    "EXTENSION_ID",
    "ActiveSkill",
    "ApprovalDenied",
    "ApprovalRequest",
    "ApprovalStore",
    "ApprovalStoreError",
    "ApproveAll",
    "AwsCredentialsError",
    "BindError",
    "BlobUnavailable",
    "BridgeConfigError",
    "ClientLimits",
    "CodeExecution",
    "CodeExecutionDenied",
    "Collision",
    "ConnectionLost",
    "ContentCache",
    "CrossOriginRead",
    "CrossOriginReadDenied",
    "DenyAll",
    "DigestCache",
    "DigestMismatch",
    "DirectoryItem",
    "DirectoryView",
    "DynamicSkillDeclined",
    "EntryProblem",
    "ExtensionNotDeclared",
    "Finding",
    "FrontmatterError",
    "FrontmatterMismatch",
    "Hazard",
    "HazardKind",
    "HostError",
    "InvalidAudienceRule",
    "InvalidCursor",
    "InvalidEntry",
    "InvalidIndex",
    "InvalidName",
    "InvalidResponse",
    "InvalidServerEntry",
    "InvalidSkillURI",
    "LimitExceeded",
    "LintPathError",
    "LintReport",
    "LintedSkill",
    "Listing",
    "LocalOrigin",
    "LockError",
    "ManifestDiff",
    "ManifestFile",
    "NotASkill",
    "Policy",
    "RegisteredSkill",
    "RequestTimeout",
    "ResourceContent",
    "ResponseTooLarge",
    "SdkShapeChanged",
    "ServeOptions",
    "ServedFileChanged",
    "ServedSkills",
    "ServerError",
    "ServerOrigin",
    "SignatureError",
    "SignatureInvalid",
    "SignatureMissing",
    "SigningError",
    "SizeMismatch",
    "SkillCatalog",
    "SkillChanged",
    "SkillDocument",
    "SkillEntry",
    "SkillError",
    "SkillHost",
    "SkillMdCheck",
    "SkillNotActive",
    "SkillNotFound",
    "SkillRef",
    "SkillRoot",
    "SkillTools",
    "SkillsClient",
    "SkillsExtension",
    "SkillwireError",
    "SnapshotStore",
    "StoreError",
    "TaggedContent",
    "ToolResult",
    "TrustPolicy",
    "UnknownOrigin",
    "UnlistedFile",
    "UnsafeCacheLocation",
    "UnsafeFile",
    "UntrustedSigner",
    "UpstreamUnavailable",
    "VerificationFailed",
    "WireBounds",
    "__version__",
    "bind_http_socket",
    "build_server",
    "check_links",
    "check_skill_md",
    "event_loop_options",
    "frontmatter_differences",
    "frontmatter_size_problem",
    "http_app",
    "interop_hazards",
    "lint_path",
    "parse_frontmatter",
    "parse_skill_md",
    "serve_http",
    "serve_stdio",
    "split_skill_md",
    "uvicorn_config",
    "yaml_interop_hazards",
]

# Which module defines each public name. Imported on first use (PEP 562), not with the package: any
# `import skillwire.<module>` runs this file first, and importing every public name here (the host,
# the client, checks with markdown-it-py, rich, signing, ...) was 0.3 s of CPU of every `skillwire
# serve` start (python -X importtime), which needs only the catalog and the server.
_EXPORTS: dict[str, tuple[str, ...]] = {
    "skillwire.catalog.catalog": ("SkillCatalog",),
    "skillwire.catalog.digests": ("DigestCache",),
    "skillwire.catalog.filesystem": ("SkillRoot",),
    "skillwire.catalog.persist": ("SnapshotStore",),
    "skillwire.checks.hazards": (
        "Hazard",
        "HazardKind",
        "interop_hazards",
        "yaml_interop_hazards",
    ),
    "skillwire.checks.links": ("check_links",),
    "skillwire.checks.lint": (
        "Finding",
        "LintedSkill",
        "LintReport",
        "SkillMdCheck",
        "check_skill_md",
        "lint_path",
    ),
    "skillwire.client.bounds": ("WireBounds",),
    "skillwire.client.limits": ("ClientLimits",),
    "skillwire.client.skills": (
        "DirectoryItem",
        "EntryProblem",
        "Listing",
        "ResourceContent",
        "SkillsClient",
    ),
    "skillwire.core.entry": ("SkillEntry",),
    "skillwire.core.errors": (
        "SdkShapeChanged",
        "UnsafeFile",
        "ApprovalDenied",
        "ApprovalStoreError",
        "AwsCredentialsError",
        "BindError",
        "BlobUnavailable",
        "BridgeConfigError",
        "CodeExecutionDenied",
        "ConnectionLost",
        "CrossOriginReadDenied",
        "DigestMismatch",
        "DynamicSkillDeclined",
        "ExtensionNotDeclared",
        "FrontmatterError",
        "FrontmatterMismatch",
        "HostError",
        "InvalidAudienceRule",
        "InvalidCursor",
        "InvalidEntry",
        "InvalidIndex",
        "InvalidName",
        "InvalidResponse",
        "InvalidServerEntry",
        "InvalidSkillURI",
        "LimitExceeded",
        "LintPathError",
        "LockError",
        "NotASkill",
        "RequestTimeout",
        "ResponseTooLarge",
        "ServedFileChanged",
        "ServerError",
        "SignatureError",
        "SignatureInvalid",
        "SignatureMissing",
        "SigningError",
        "SizeMismatch",
        "SkillChanged",
        "SkillError",
        "SkillNotActive",
        "SkillNotFound",
        "SkillwireError",
        "StoreError",
        "UnknownOrigin",
        "UnlistedFile",
        "UnsafeCacheLocation",
        "UntrustedSigner",
        "UpstreamUnavailable",
        "VerificationFailed",
    ),
    "skillwire.core.json": ("frontmatter_differences",),
    "skillwire.core.manifest": (
        "ManifestDiff",
        "ManifestFile",
    ),
    "skillwire.core.skill_md": (
        "SkillDocument",
        "parse_skill_md",
        "split_skill_md",
    ),
    "skillwire.core.yaml": (
        "frontmatter_size_problem",
        "parse_frontmatter",
    ),
    "skillwire.host.active": (
        "ActiveSkill",
        "DirectoryView",
    ),
    "skillwire.host.approvals": ("ApprovalStore",),
    "skillwire.host.cache": ("ContentCache",),
    "skillwire.host.framing": ("TaggedContent",),
    "skillwire.host.host": ("SkillHost",),
    "skillwire.host.identity": ("SkillRef",),
    "skillwire.host.origins": (
        "LocalOrigin",
        "ServerOrigin",
    ),
    "skillwire.host.policy": (
        "ApprovalRequest",
        "ApproveAll",
        "CodeExecution",
        "CrossOriginRead",
        "DenyAll",
        "Policy",
    ),
    "skillwire.host.registry": (
        "Collision",
        "RegisteredSkill",
    ),
    "skillwire.host.tools": (
        "SkillTools",
        "ToolResult",
    ),
    "skillwire.host.trust": ("TrustPolicy",),
    "skillwire.server.app": (
        "bind_http_socket",
        "build_server",
        "event_loop_options",
        "http_app",
        "serve_http",
        "serve_stdio",
        "uvicorn_config",
    ),
    "skillwire.server.extension": ("SkillsExtension",),
    "skillwire.core.protocol": ("EXTENSION_ID",),
    "skillwire.server.options": (
        "ServeOptions",
        "ServedSkills",
    ),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}
# Old names that still work, each use warning with a DeprecationWarning that names the new one.
_RENAMED = {"FileChanged": "ServedFileChanged"}


def __getattr__(name: str) -> object:
    if name in _RENAMED:
        from skillwire._deprecation import warn_renamed

        warn_renamed(f"skillwire.{name}", f"skillwire.{_RENAMED[name]}")
        return __getattr__(_RENAMED[name])
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'skillwire' has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module), name)
    # Shown as `skillwire.X` (reprs, tracebacks, docs), as httpx does: where a class is defined
    # inside the package is not part of the API.
    if isinstance(value, type) or (callable(value) and hasattr(value, "__code__")):
        value.__module__ = __name__
    globals()[name] = value  # the next access is an ordinary attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
