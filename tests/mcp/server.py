"""chatcli's own MCP test server (Python SDK, FastMCP, stdio).

`python3 server.py` serves a few tools for notifications, errors, images and crashes;
`python3 server.py many` adds 60 numbered tools (the deferred-schema case).
"""

import base64
import os
import sys

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import ImageContent, ToolAnnotations

server = FastMCP("chatcli-test")

# A 1x1 transparent PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def echo(text: str) -> str:
    """Echo the text back. Nothing else happens."""
    return f"echo: {text}"


@server.tool()
async def notify(message: str, ctx: Context) -> str:
    """Send a log message to the client while running. Returns when it was sent."""
    await ctx.info(message)
    return "notified"


@server.tool()
def fail(reason: str) -> str:
    """Fail on purpose with the given reason."""
    raise ValueError(f"failed on purpose: {reason}")


@server.tool(annotations=ToolAnnotations(readOnlyHint=True))
def pixel() -> ImageContent:
    """Return a one-pixel PNG image."""
    return ImageContent(type="image", data=base64.b64encode(PIXEL).decode(), mimeType="image/png")


@server.tool()
def crash() -> str:
    """Exit the server process at once, as a crashing server would."""
    sys.stderr.write("test server: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


def grown() -> str:
    """A tool added while the session runs."""
    return "grown!"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `grown` and tell the client its tool list changed."""
    server.add_tool(grown, name="grown")
    await ctx.session.send_tool_list_changed()
    return "grew"


@server.prompt()
def review(path: str) -> str:
    """Ask for a review of one file."""
    return f"Please review {path}."


def numbered(n: int):
    def tool(query: str, limit: int = 10, verbose: bool = False) -> str:
        return f"tool {n:02d}: {query} (limit {limit}, verbose {verbose})"

    return tool


if len(sys.argv) > 1 and sys.argv[1] == "many":
    for n in range(60):
        server.add_tool(
            numbered(n),
            name=f"lookup_{n:02d}",
            description=(
                f"Look up records in collection number {n:02d} by a free-text query. "
                "Returns at most `limit` matching records, one per line, with their ids, "
                "titles and the fields that matched; `verbose` adds every field."
            ),
            annotations=ToolAnnotations(readOnlyHint=True),
        )

if __name__ == "__main__":
    server.run()
