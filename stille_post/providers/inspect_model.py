"""Inspect's models as a Provider: `inspect:PROVIDER/MODEL` seats, and the evaluated seats
of our Inspect tasks (stille_post/inspect_tasks/).

Our `ChatRequest` becomes Inspect's chat messages, `ToolInfo`s, tool choice and
`GenerateConfig`; `Model.generate()` answers; its `ModelOutput` comes back as a
`Completion`. Everything Inspect does around a call therefore applies: its retries and
timeouts, its cache, its limits and its usage accounting (inside an eval, each call is a
model event of the sample). Our rules stay ours: the reply is parsed, re-asked and
forfeited by the kit exactly as any seat's.

`inspect_ai` is an optional extra (`pip install stille_post[inspect]`), imported only
when an `inspect:` seat or task is played; without it the seat is refused before the
game in one line (`INSTALL_HINT`).

Errors:
- Inspect's retries are its own, so a call that still raises is a `ProviderError`
  (the seat forfeits that decision), never a crash;
- an Inspect *limit* (token, message, time, cost: `LimitExceededError`) is not the
  seat's failure but the eval's decision to stop the sample: the game is aborted
  (`InspectLimitReached`), and the Inspect task re-raises the original error after our
  transcript is written, so Inspect records the limit as it does for any task.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stille_post.core.errors import GameAborted, ProviderError, UsageError
from stille_post.providers._common import UNKNOWN_USAGE, read_usage, with_known_usage
from stille_post.providers.base import (
    ChatRequest,
    Completion,
    ReplayMiss,
    Tool,
    ToolCall,
)

if TYPE_CHECKING:
    from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput
    from inspect_ai.tool import ToolChoice, ToolInfo

INSTALL_HINT = ("inspect: seats need inspect_ai; install it with "
                "`pip install 'stille_post[inspect]'`")
_REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")


# Inspect's model providers whose HTTP traffic our cassettes record and replay (checked
# by tests/inspect_tasks/test_cassettes.py: the openai SDK, over the transport our VCR
# configuration patches). Inspect's other clients are not checked: a recorded game may
# miss their calls, and a replay may then stop at the first one (say so at start).
INSPECT_CASSETTES = ("openai",)
INSPECT_OFFLINE = ("mockllm",)  # no HTTP at all


def cassette_note(model: str, mode: str) -> str | None:
    """The line `--record`/`--replay` prints for an `inspect:` seat on `model`, or None
    when its traffic is recorded like any seat's."""
    provider = model.partition("/")[0]
    if provider in INSPECT_CASSETTES:
        return None
    if provider in INSPECT_OFFLINE:
        return f"inspect:{model} makes no HTTP calls: the cassette holds nothing of it"
    return (f"inspect:{model}: --{mode} is checked for Inspect's "
            f"{', '.join(INSPECT_CASSETTES)} models only; this seat's calls may not "
            f"{'be recorded' if mode == 'record' else 'replay'}")


def require_inspect() -> None:
    """Raise the one-line install hint when inspect_ai is not installed."""
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        raise UsageError(INSTALL_HINT) from None


class InspectLimitReached(GameAborted):
    """An Inspect limit stopped the sample mid-game; `error` is Inspect's own exception,
    which the task re-raises once the game's transcript is written."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(f"Inspect limit reached: {error}")
        self.error = error


class InspectProvider:
    """A Provider on an Inspect `Model`.

    `model`: a model name as Inspect writes it ("openai/gpt-5-mini", "mockllm/model"),
    resolved with `get_model()` on the first call, or a `Model` (the task's evaluated
    model). `model_args` go to `get_model()` (e.g. mockllm's `custom_outputs`).

    `replay`: the game replays a cassette (`--replay`): Inspect does not retry (a
    request missing from the cassette ends the game at once, as for any seat), and
    `api_key` (the factory's stand-in key) is given to the client, which would
    otherwise refuse to start without a key in the environment. Live, Inspect reads its
    own keys from the environment and retries by its own `GenerateConfig`; the other
    options every seat factory passes (`retry_policy`, `alias`) are not used."""

    def __init__(self, model: str | Model, *, base_url: str | None = None,
                 model_args: dict[str, Any] | None = None, replay: bool = False,
                 api_key: str | None = None, **_seat_options: Any) -> None:
        require_inspect()
        self._spec = model
        self._base_url = base_url
        self._replay = replay
        self._api_key = api_key if replay else None
        self._model_args = dict(model_args or {})
        self._model: Model | None = None if isinstance(model, str) else model
        self.model = model if isinstance(model, str) else str(model)
        self.limit_error: BaseException | None = None  # set when a limit stopped a call
        self.last_output: ModelOutput | None = None  # for the seat's view in a task's log

    def resolved(self) -> Model:
        if self._model is None:
            from inspect_ai.model import get_model

            args = dict(self._model_args)
            if str(self._spec).startswith("mockllm/") and "custom_outputs" not in args:
                args["custom_outputs"] = mock_default_output
            try:
                self._model = get_model(self._spec, base_url=self._base_url,
                                        api_key=self._api_key, **args)
            except Exception as exc:  # an unknown provider, a missing package or key
                raise ProviderError(f"inspect:{self._spec}: {type(exc).__name__}: "
                                    f"{first_line(exc)}") from exc
        return self._model

    async def complete(self, request: ChatRequest) -> Completion:
        from inspect_ai.util import LimitExceededError

        model = self.resolved()
        try:
            output = await model.generate(
                to_inspect_messages(request),
                tools=[to_inspect_tool(t) for t in request.tools],
                tool_choice=to_tool_choice(request.tool_choice, request.tools),
                config=to_generate_config(request, retries=0 if self._replay else None),
            )
        except LimitExceededError as exc:
            self.limit_error = exc
            raise InspectLimitReached(exc) from exc
        except Exception as exc:  # after Inspect's own retries: the decision forfeits
            from stille_post.providers.retry import classify

            failure = classify(exc)
            if failure.kind == "replay_miss":  # nothing real can happen in this game now
                raise ReplayMiss(f"inspect:{self.model}: {failure.message}") from exc
            raise ProviderError(f"{type(exc).__name__}: {first_line(exc)}") from exc
        self.last_output = output
        return with_known_usage(from_model_output(output, fallback_model=str(model)),
                                request)


def mock_default_output(input: list[ChatMessage], tools: list[ToolInfo], tool_choice: Any,
                        config: GenerateConfig) -> ModelOutput:
    """Inspect's mock model's own default reply, with usage estimated at 4 characters per
    token. Left to itself, the mock estimates usage with tiktoken's o200k_base file,
    which tiktoken fetches from the network on first use: an `inspect:mockllm/model`
    seat must play offline, as the seat spec promises."""
    from inspect_ai.model import ModelOutput, ModelUsage
    from inspect_ai.model._providers.mockllm import MockLLM

    text = MockLLM.default_output
    prompt = sum(len(m.text) for m in input) + sum(len(t.model_dump_json()) for t in tools)
    output = ModelOutput.from_content(model="mockllm", content=text)
    output.usage = ModelUsage(input_tokens=max(1, prompt // 4), output_tokens=len(text) // 4,
                              total_tokens=max(1, prompt // 4) + len(text) // 4)
    return output


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return (text.splitlines()[0] if text else "")[:300]


# --- our request -> Inspect ---------------------------------------------------------------


def to_inspect_messages(request: ChatRequest) -> list[ChatMessage]:
    from inspect_ai.model import (
        ChatMessageAssistant,
        ChatMessageSystem,
        ChatMessageTool,
        ChatMessageUser,
    )
    from inspect_ai.tool import ToolCall as InspectToolCall

    out: list[ChatMessage] = []
    if request.system:
        out.append(ChatMessageSystem(content=request.system))
    names: dict[str, str] = {}  # tool-call id -> function, for the tool results
    for i, m in enumerate(request.messages):
        if m.role == "user":
            out.append(ChatMessageUser(content=m.content))
        elif m.role == "assistant":
            calls = []
            for j, c in enumerate(m.tool_calls):
                call_id = c.id or f"call_{i}_{j}"
                names[call_id] = c.name
                calls.append(InspectToolCall(id=call_id, function=c.name,
                                             arguments=dict(c.arguments)))
            out.append(ChatMessageAssistant(content=m.content, tool_calls=calls or None))
        else:
            out.append(ChatMessageTool(content=m.content, tool_call_id=m.tool_call_id,
                                       function=names.get(m.tool_call_id or "")))
    return out


def to_inspect_tool(tool: Tool) -> ToolInfo:
    from inspect_ai.tool import ToolInfo, ToolParams

    schema = {k: v for k, v in tool.parameters.items() if k != "$schema"}
    return ToolInfo(name=tool.name, description=tool.description,
                    parameters=ToolParams.model_validate(schema))


def to_tool_choice(choice: str | None, tools: list[Tool]) -> ToolChoice | None:
    """Ours: "auto" | "required" | "none" | a tool's name. Inspect's "any" is our
    "required"."""
    from inspect_ai.tool import ToolFunction

    if choice is None or not tools:
        return None
    if choice in ("auto", "none"):
        return choice  # type: ignore[return-value]
    if choice == "required":
        return "any"
    return ToolFunction(name=choice)


def to_generate_config(request: ChatRequest, *, retries: int | None = None
                       ) -> GenerateConfig:
    """The request's settings; `retries` caps Inspect's own retries (None: Inspect's
    default, or the eval's `--max-retries`)."""
    from inspect_ai.model import GenerateConfig

    effort = request.reasoning_effort if request.reasoning_effort in _REASONING_EFFORTS \
        else None
    return GenerateConfig(max_tokens=request.max_output_tokens,
                          temperature=request.temperature,
                          reasoning_effort=effort,
                          extra_body=dict(request.extra) or None, max_retries=retries)


# --- Inspect's output -> our Completion ---------------------------------------------------


def from_model_output(output: ModelOutput, *, fallback_model: str) -> Completion:
    message = output.message if output.choices else None
    text = message.text if message is not None else (output.completion or "")
    calls: list[ToolCall] = []
    for c in (message.tool_calls or []) if message is not None else []:
        args = c.arguments
        malformed = c.parse_error
        if not isinstance(args, dict):
            args, malformed = {}, malformed or "arguments are not a JSON object"
        calls.append(ToolCall(str(c.function), args, id=c.id, malformed=malformed))
    u = output.usage
    # Read within bounds like every adapter's (core/usage.py): unknown when missing or
    # unreadable, and then counted by the estimate in `complete` (`with_known_usage`).
    usage = read_usage(u.input_tokens, u.output_tokens, u.input_tokens_cache_read) \
        if u is not None else UNKNOWN_USAGE
    if output.error and not text and not calls:
        raise ProviderError(f"the model answered with an error: {output.error}"[:300])
    return Completion(text=text, tool_calls=calls, usage=usage,
                      model=output.model or fallback_model,
                      finish_reason=str(output.stop_reason))

