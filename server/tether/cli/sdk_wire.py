"""The control requests an Agent SDK program sends us, typed; and what Tether makes of each
subtype the SDKs know.

Read from the SDKs' own sources (``docs/agent-sdk.md`` names the releases): the TypeScript
SDK's ``SDKControlRequestInner`` union and ``Query`` methods, the Python SDK's
``_internal/query.py``. Every subtype is one of three kinds:

- handled (``IncomingRequest``): parsed here, answered by ``cli/sdk_requests.py``;
- known but not offered by Tether (``NOT_OFFERED``): answered with an error that names the
  subtype and says why, so a program learns it at once instead of waiting;
- unknown: answered with Claude Code's own ``Unsupported control request subtype: X``
  error (``error_code: unsupported_request``), which the SDKs recognise.

Fields a request carries that Tether does not use are kept (``extra="allow"``) and, where
they change behaviour the program relies on, reported by the handler.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError


class RequestRefused(Exception):
    """A request we answer with an error; ``code`` is the SDKs' ``error_code``."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


class _Request(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class HookMatcherConfig(_Request):
    matcher: str | None = None
    callback_ids: list[str] = Field(default_factory=lambda: list[str](), alias="hookCallbackIds")
    timeout: float | None = None
    """Seconds."""
    on_failure: str | None = Field(default=None, alias="onFailure")
    """``continue`` or ``block`` (anything else counts as ``block``, as in Claude Code)."""

    @property
    def blocks_on_failure(self) -> bool:
        return self.on_failure is not None and self.on_failure != "continue"


class SdkAgent(_Request):
    """An agent the program defines (``agents`` of the SDK options)."""

    description: str
    prompt: str
    tools: list[str] | None = None
    disallowed_tools: list[str] | None = Field(default=None, alias="disallowedTools")
    model: str | None = None
    """An alias, a model id, or ``inherit``."""
    permission_mode: str | None = Field(default=None, alias="permissionMode")


class ToolPolicy(_Request):
    """``McpServerToolPolicy``: how calls of one tool of a server are decided."""

    name: str
    permission_policy: str | None = None
    """``always_allow`` | ``always_ask`` | ``always_deny``."""


class SdkServerConfig(_Request):
    """``sdkMcpServerConfigs[name]`` / an ``{"type": "sdk"}`` entry of ``mcp_set_servers``."""

    timeout: float | None = None
    """Milliseconds per tool call (below 1000: ignored, as in Claude Code)."""
    tools: list[ToolPolicy] | None = None


class SdkManifest(_Request):
    """``sdkMcpServerManifests[name]``: an in-process server's own handshake answers, so the
    handshake needs no round trip over the control channel."""

    initialize_result: dict[str, Any] = Field(alias="initializeResult")
    tools_list_result: dict[str, Any] | None = Field(default=None, alias="toolsListResult")


class InitializeRequest(_Request):
    subtype: Literal["initialize"]
    hooks: dict[str, list[HookMatcherConfig]] | None = None
    agents: dict[str, SdkAgent] | None = None
    sdk_mcp_servers: list[str] | None = Field(default=None, alias="sdkMcpServers")
    sdk_mcp_server_configs: dict[str, Any] | None = Field(default=None, alias="sdkMcpServerConfigs")
    sdk_mcp_server_manifests: Any = Field(default=None, alias="sdkMcpServerManifests")
    """Checked entry by entry (a malformed one is reported, not fatal)."""
    mcp_servers: dict[str, Any] | None = Field(default=None, alias="mcpServers")
    """External servers sent over stdin (``--await-initialize``)."""
    system_prompt: list[str] | None = Field(default=None, alias="systemPrompt")
    append_system_prompt: str | None = Field(default=None, alias="appendSystemPrompt")
    title: str | None = None
    settings: dict[str, Any] | None = None
    disallowed_tools: list[str] | None = Field(default=None, alias="disallowedTools")
    additional_directories: list[str] | None = Field(default=None, alias="additionalDirectories")
    json_schema: dict[str, Any] | None = Field(default=None, alias="jsonSchema")
    managed_settings: Any = Field(default=None, alias="managedSettings")
    plugins: list[Any] | None = None


class InterruptRequest(_Request):
    subtype: Literal["interrupt"]
    cancel_queued: bool = False


class SetPermissionModeRequest(_Request):
    subtype: Literal["set_permission_mode"]
    mode: str


class SetModelRequest(_Request):
    subtype: Literal["set_model"]
    model: str | None = None
    """None or ``default``: back to the session's default model."""


class SetMaxThinkingTokensRequest(_Request):
    subtype: Literal["set_max_thinking_tokens"]
    max_thinking_tokens: int | None = None


class McpStatusRequest(_Request):
    subtype: Literal["mcp_status"]


class McpSetServersRequest(_Request):
    subtype: Literal["mcp_set_servers"]
    servers: dict[str, dict[str, Any]]


class McpReconnectRequest(_Request):
    subtype: Literal["mcp_reconnect"]
    server_name: str = Field(alias="serverName")


class McpToggleRequest(_Request):
    subtype: Literal["mcp_toggle"]
    server_name: str = Field(alias="serverName")
    enabled: bool


class McpMessageRequest(_Request):
    """A message an in-process server sends on its own (``tools/list_changed``...)."""

    subtype: Literal["mcp_message"]
    server_name: str
    message: dict[str, Any]


class McpCallRequest(_Request):
    subtype: Literal["mcp_call"]
    tool: str
    arguments: dict[str, Any] = Field(default_factory=lambda: dict[str, Any]())
    check_permissions: bool = False
    """Decide the call as the model's own: rules, mode, hooks, a question if due."""


class StopTaskRequest(_Request):
    subtype: Literal["stop_task"]
    task_id: str


class GetContextUsageRequest(_Request):
    subtype: Literal["get_context_usage"]


class CancelAsyncMessageRequest(_Request):
    subtype: Literal["cancel_async_message"]
    message_uuid: str


class ListModelsRequest(_Request):
    subtype: Literal["list_models"]


class GetBinaryVersionRequest(_Request):
    subtype: Literal["get_binary_version"]


class SetHasSubscribersRequest(_Request):
    subtype: Literal["set_has_subscribers"]
    has_subscribers: bool | None = None


class EndSessionRequest(_Request):
    subtype: Literal["end_session"]


IncomingRequest = Annotated[
    InitializeRequest
    | InterruptRequest
    | SetPermissionModeRequest
    | SetModelRequest
    | SetMaxThinkingTokensRequest
    | McpStatusRequest
    | McpSetServersRequest
    | McpReconnectRequest
    | McpToggleRequest
    | McpMessageRequest
    | McpCallRequest
    | StopTaskRequest
    | GetContextUsageRequest
    | CancelAsyncMessageRequest
    | ListModelsRequest
    | GetBinaryVersionRequest
    | SetHasSubscribersRequest
    | EndSessionRequest,
    Field(discriminator="subtype"),
]
_REQUESTS: TypeAdapter[IncomingRequest] = TypeAdapter(IncomingRequest)
HANDLED = (
    "initialize",
    "interrupt",
    "set_permission_mode",
    "set_model",
    "set_max_thinking_tokens",
    "mcp_status",
    "mcp_set_servers",
    "mcp_reconnect",
    "mcp_toggle",
    "mcp_message",
    "mcp_call",
    "stop_task",
    "get_context_usage",
    "cancel_async_message",
    "list_models",
    "get_binary_version",
    "set_has_subscribers",
    "end_session",
)

_NO_PLUGINS = "Tether has no plugins (skills, agents and MCP servers come from the workspace)"
_SETTINGS = (
    "Tether's settings come from its settings files and --settings when the session starts; "
    "a program cannot rewrite them while it runs"
)
_ACCOUNT = "Tether has no Claude account: it calls the API with the key or token it is given"
_HOSTED = "it belongs to Claude's hosted sessions, which Tether does not run"
NOT_OFFERED: dict[str, str] = {
    "rewind_files": (
        "Tether's checkpoints are per turn and its rewind puts the conversation back too "
        "(tether/rewind in the editors); files alone cannot be put back"
    ),
    "apply_flag_settings": _SETTINGS,
    "update_settings": _SETTINGS,
    "get_settings": "Tether does not report its merged settings over the control channel",
    "get_hooks_listing": "Tether does not list its hooks over the control channel",
    "list_permission_rules": "Tether does not list its permission rules over the control channel",
    "reload_plugins": _NO_PLUGINS,
    "reload_skills": "skills are read from disk at each turn already",
    "reload_output_styles": "Tether has no output styles",
    "read_file": "read files in the program itself: Tether does not serve files",
    "file_suggestions": "Tether has no @-mention completion outside the editors",
    "seed_read_state": "Tether's read-before-edit check uses content it read itself",
    "register_repo_root": _HOSTED,
    "background_tasks": "Tether cannot send a running foreground call to the background",
    "get_task_output": "read a background task's output file named in its task notification",
    "get_session_cost": "the result message of each turn carries total_cost_usd",
    "get_usage": "the result message of each turn carries usage and total_cost_usd",
    "rename_session": "Tether titles sessions itself (the title option of initialize sets it)",
    "set_color": "Tether has no session colours",
    "mcp_read_resource": "Tether does not render MCP Apps resources (ui://)",
    "mcp_authenticate": "Tether does not run OAuth for MCP servers",
    "mcp_clear_auth": "Tether does not run OAuth for MCP servers",
    "mcp_oauth_callback_url": "Tether does not run OAuth for MCP servers",
    "claude_authenticate": _ACCOUNT,
    "claude_oauth_callback": _ACCOUNT,
    "claude_oauth_wait_for_completion": _ACCOUNT,
    "remote_control": _HOSTED,
    "claim_session": _HOSTED,
    "channel_enable": _HOSTED,
    "side_question": "ask in a turn of the session: Tether has no side questions",
    "generate_session_title": "Tether titles sessions itself",
    "update_queued_message": "cancel the queued prompt (cancel_async_message) and send it again",
    "set_cwd": "a session's workspace is fixed when it starts",
    "set_prompt_suggestions_paused": "Tether makes no prompt suggestions",
    "prompt_draft_activity": "Tether makes no prompt suggestions",
    "set_mcp_permission_mode_override": "use permission rules (mcp__server__tool) instead",
    "get_status": "the system/init message of each turn says what get_status would",
    "get_plan": "the plan is the input of the ExitPlanMode question (can_use_tool)",
    "export_conversation": "the transcript is the JSONL file named as transcript_path",
    "get_memory_dialog": "Tether has no terminal dialogs",
    "get_skills_dialog": "Tether has no terminal dialogs",
    "get_sandbox_dialog": "Tether has no terminal dialogs",
    "get_chrome_dialog": "Tether does not drive a browser",
    "get_chrome_browsers": "Tether does not drive a browser",
    "select_chrome_browser": "Tether does not drive a browser",
    "set_chrome_browser_hints": "Tether does not drive a browser",
    "submit_feedback": "report Tether's problems in its issue tracker",
    "submit_survey_feedback": "report Tether's problems in its issue tracker",
    "message_rated": "Tether collects no ratings",
    "ultrareview_launch": _HOSTED,
    "decide_held_peer_message": _HOSTED,
    "set_peer_delivery": _HOSTED,
}
UNSUPPORTED_CODE = "unsupported_request"


def parse_request(body: dict[str, Any]) -> IncomingRequest:
    """A request the program sent; raises ``RequestRefused`` with the message its
    ``control_response`` should carry."""
    subtype = body.get("subtype")
    if subtype not in HANDLED:
        reason = NOT_OFFERED.get(subtype) if isinstance(subtype, str) else None
        if reason is not None:
            message = f"{subtype} is not supported by Tether: {reason}"
            raise RequestRefused(message, UNSUPPORTED_CODE)
        raise RequestRefused(f"Unsupported control request subtype: {subtype}", UNSUPPORTED_CODE)
    try:
        return _REQUESTS.validate_python(body)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'][1:]) or '(request)'}: {err['msg']}"
            for err in e.errors(include_url=False)[:3]
        )
        raise RequestRefused(f"bad {subtype} request: {problems}") from None
