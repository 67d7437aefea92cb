"""The workspace's MCP servers as prompt expansion sees them (``skills.expand.McpPrompts``):
their prompts as ``/mcp__<server>__<prompt>`` commands, their resources for ``@server:uri``.
"""

from __future__ import annotations

import mcp_types as types
from mcp import MCPError

from tether.core.messages import ImageBlock, TextBlock
from tether.errors import ToolError
from tether.mcp.manager import McpManager
from tether.mcp.resource_tools import read_resource
from tether.protocol.content import ContentBlock, ImageContent, TextContent
from tether.skills.expand import CommandError, McpPromptInfo


class McpPromptSource:
    def __init__(self, manager: McpManager) -> None:
        self.manager = manager

    def prompts(self) -> list[McpPromptInfo]:
        return [
            McpPromptInfo(
                server=server,
                name=prompt.name,
                description=(prompt.description or prompt.title or prompt.name).strip(),
                arguments=tuple((a.name, bool(a.required)) for a in prompt.arguments or []),
            )
            for server, prompt in self.manager.prompts()
        ]

    def servers(self) -> list[str]:
        return list(self.manager.connections)

    async def render_prompt(
        self, server: str, name: str, arguments: dict[str, str]
    ) -> list[ContentBlock]:
        try:
            result = await self.manager.connection(server).get_prompt(name, arguments)
        except MCPError as e:
            raise CommandError(
                f"The MCP server {server} refused the prompt {name}: {e.error.message}"
            )
        except (KeyError, ToolError) as e:
            raise CommandError(f"The prompt {name} of {server} is not available: {e}")
        blocks: list[ContentBlock] = []
        for message in result.messages:
            blocks += _content(message.content)
        return blocks or [TextContent(text=f"(the prompt {name} of {server} is empty)")]

    async def resource(self, server: str, uri: str) -> list[ContentBlock]:
        try:
            parts = await read_resource(self.manager, server, uri)
        except ToolError as e:
            raise CommandError(f"@{server}:{uri} could not be attached: {e}")
        out: list[ContentBlock] = []
        for part in parts:
            if isinstance(part, ImageBlock):
                out.append(ImageContent(mime_type=part.media_type, data=part.data))
            elif isinstance(part, TextBlock):
                out.append(TextContent(text=part.text))
        return out


def _content(content: types.ContentBlock) -> list[ContentBlock]:
    if isinstance(content, types.TextContent):
        return [TextContent(text=content.text)]
    if isinstance(content, types.ImageContent):
        return [ImageContent(mime_type=content.mime_type, data=content.data)]
    if isinstance(content, types.EmbeddedResource) and isinstance(
        content.resource, types.TextResourceContents
    ):
        resource = content.resource
        return [TextContent(text=f'<resource uri="{resource.uri}">\n{resource.text}\n</resource>')]
    return [TextContent(text=f"[{content.type} content omitted]")]
