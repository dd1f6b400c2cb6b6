"""``anthropic``: JSONL of ``{"id", "system"?, "messages", "metadata"?}`` with Messages API blocks.

Each answered user turn is a session (``_turns``): question, the turn's user text (a user
message returning tool results continues the turn); answer, the text blocks of the turn's last
assistant message that has text, joined. References of the turn, in order, one per tool call id:
- ``tool_result`` blocks (string content, or text, ``search_result`` and text ``document``
  blocks; images and other blocks are named in ``unreadable``), titled by the ``tool_use``;
- ``web_fetch_tool_result``: the fetched document's text, url and title;
- ``web_search_tool_result``: the result list (titles, urls, and page text where the log has it).
  Search results' ``encrypted_content`` cannot be read: the reference says so in
  ``unreadable`` instead of passing ciphertext to the judge.
- other server and MCP tools' ``*_tool_result`` blocks (code execution, ``mcp_tool_result``)
  like ``tool_result``: their text, or their object as JSON.
A ``tool_use`` (client, server or MCP) with no result block is an error naming its id: a
reference the judge never sees must not pass unnoticed.
``citations`` on the answer's text blocks become the session's citations.
"""

from __future__ import annotations

from typing import Any

from ._common import (
    Converted,
    ConvertOptions,
    RecordError,
    ToolCalls,
    as_text,
    call_title,
    part_text,
    reference,
    require,
    url_argument,
)
from ._turns import Answered, Asked, Event, Pulled, turn_sessions

NAME = "anthropic"


def convert_record(record: dict[str, Any], options: ConvertOptions) -> Converted:
    session_id = require(record, "id", str)
    messages = require(record, "messages", list)
    calls = ToolCalls("tool_use", "result block with tool_use_id")
    events: list[Event] = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            raise RecordError(f"messages[{index}] is not an object")
        blocks = _blocks(message.get("content"), index)
        role = message.get("role")
        results = 0
        for block in blocks:
            kind = block.get("type")
            if kind in _CALLS:
                if not isinstance(block.get("id"), str):
                    continue  # a call without an id cannot be answered; nothing to track
                calls.asked(block["id"], index, block.get("name"), block.get("input"))
            elif isinstance(kind, str) and _is_tool_block(kind):
                call_id = block.get("tool_use_id")
                if not isinstance(call_id, str) or not call_id:
                    raise RecordError(f"messages[{index}]: {kind} block without a tool_use_id")
                tool, args = calls.answered(call_id)
                build = _RESULTS.get(kind, _tool_result)
                events.append(Pulled(build(call_id, block, tool, args, options)))
                results += 1
        if role == "user" and not results:
            # A user message that returns tool results continues the turn; any other user
            # text asks a new question.
            text = "".join(
                part_text(b, f"messages[{index}]") for b in blocks if b.get("type") == "text"
            )
            events.append(Asked(text, f"messages[{index}]"))
        elif role == "assistant":
            text, citations = _answer(blocks, f"messages[{index}]")
            events.append(Answered(text, tuple(citations)))
    calls.check_all_answered()
    return turn_sessions(record, session_id, events, last_turn=options.last_turn)


def _blocks(content: Any, index: int) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list) and all(isinstance(b, dict) for b in content):
        return content
    raise RecordError(f"messages[{index}].content must be a string or a list of blocks")


def _answer(blocks: list[dict[str, Any]], where: str) -> tuple[str, list[dict[str, Any]]]:
    """The text after the message's last tool block (what came before it, "I'll search for
    that", was said while still researching), and its citations, each located on the span of
    its text block."""
    tool_blocks = [i for i, b in enumerate(blocks) if _is_tool_block(b.get("type"))]
    text, citations = "", []
    for block in blocks[tool_blocks[-1] + 1 :] if tool_blocks else blocks:
        if block.get("type") != "text":
            continue
        piece = part_text(block, where)
        for cite in block.get("citations") or []:
            if isinstance(cite, dict):
                citations.append(_citation(cite, len(text), len(text) + len(piece)))
        text += piece
    return text, citations


def _citation(cite: dict[str, Any], start: int, end: int) -> dict[str, Any]:
    # web_search_result_location has url and title; the document kinds (char_location,
    # page_location, content_block_location) name the document by title; search_result_location
    # by its source.
    url = cite.get("url") or (
        cite.get("source") if cite.get("type") == "search_result_location" else None
    )
    return {
        "start": start,
        "end": end,
        "url": url,
        "title": cite.get("title") or cite.get("document_title"),
        "cited_text": cite.get("cited_text"),
        "kind": cite.get("type"),
    }


def _tool_result(
    call_id: str, block: dict[str, Any], tool: str | None, args: Any, options: ConvertOptions
) -> dict[str, Any]:
    content = block.get("content")
    urls: list[str] = []
    skipped: list[str] = []
    if isinstance(content, list):
        parts = []
        for item in content:
            if not isinstance(item, dict):
                continue
            kind = item.get("type")
            if kind == "text":
                parts.append(str(item.get("text", "")))
            elif kind == "search_result":
                # A client tool's search results: title, source and the text blocks of each.
                source = item.get("source")
                if isinstance(source, str) and source:
                    urls.append(source)
                body = "\n".join(
                    str(b.get("text", ""))
                    for b in item.get("content") or []
                    if isinstance(b, dict) and b.get("type") == "text"
                )
                parts.append(f"{item.get('title') or '(untitled)'} <{source}>\n{body}")
            elif kind == "document" and _text_source(item.get("source")):
                parts.append(str(item["source"].get("data", "")))
            else:
                skipped.append(str(kind))
        text = "\n".join(parts)
    elif content is None:
        text = ""
    else:
        text = as_text(content)
    return reference(
        call_id,
        text,
        options,
        title=call_title(tool, args),
        url=url_argument(args),
        tool=tool,
        args=args,
        urls=urls or None,
        unreadable=f"{len(skipped)} block(s) of type {', '.join(sorted(set(skipped)))}"
        if skipped
        else None,
        is_error=True if block.get("is_error") else None,
    )


def _web_fetch(
    call_id: str, block: dict[str, Any], tool: str | None, args: Any, options: ConvertOptions
) -> dict[str, Any]:
    result = _object(block.get("content"), call_id, "web_fetch_tool_result content")
    if result.get("type") != "web_fetch_result":
        code = result.get("error_code", "unknown")
        return reference(
            call_id,
            f"web fetch failed: {code}",
            options,
            title=call_title(tool, args),
            url=url_argument(args),
            tool=tool or "web_fetch",
            args=args,
            is_error=True,
        )
    document = _object(result.get("content"), call_id, "web_fetch_result content")
    source = _object(document.get("source"), call_id, "web_fetch_result document source")
    unreadable = None
    if _text_source(source):
        text = str(source.get("data", ""))
    else:
        # A base64 PDF or other binary document: not text the judge can read.
        text = ""
        unreadable = f"document source of type {source.get('type')!r} ({source.get('media_type')})"
    return reference(
        call_id,
        text,
        options,
        title=document.get("title") or call_title(tool, args),
        url=result.get("url") or url_argument(args),
        tool=tool or "web_fetch",
        args=args,
        unreadable=unreadable,
    )


def _web_search(
    call_id: str, block: dict[str, Any], tool: str | None, args: Any, options: ConvertOptions
) -> dict[str, Any]:
    results = block.get("content")
    if not isinstance(results, list):
        code = (
            (results or {}).get("error_code", "unknown") if isinstance(results, dict) else "unknown"
        )
        return reference(
            call_id,
            f"web search failed: {code}",
            options,
            title=call_title(tool, args),
            tool=tool or "web_search",
            args=args,
            is_error=True,
        )
    lines, urls, encrypted = [], [], 0
    for item in results:
        if not isinstance(item, dict):
            continue
        url, title = item.get("url"), item.get("title")
        if isinstance(url, str):
            urls.append(url)
        lines.append(f"{title or '(untitled)'} <{url}>")
        page = item.get("page_content") or item.get("text")
        if isinstance(page, str) and page:
            lines.append(page)
        elif item.get("encrypted_content"):
            encrypted += 1
    unreadable = f"encrypted page content of {encrypted} search result(s)" if encrypted else None
    return reference(
        call_id,
        "\n".join(lines),
        options,
        title=call_title(tool, args),
        tool=tool or "web_search",
        args=args,
        urls=urls or None,
        unreadable=unreadable,
    )


def _text_source(source: Any) -> bool:
    return isinstance(source, dict) and source.get("type") == "text"


def _object(value: Any, call_id: str, what: str) -> dict[str, Any]:
    """A block field that the Messages API defines as an object (absent counts as empty)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RecordError(
            f"tool call {call_id!r}: {what} must be an object, got {type(value).__name__}"
        )
    return value


_CALLS = ("tool_use", "server_tool_use", "mcp_tool_use")


def _is_tool_block(kind: Any) -> bool:
    """A tool call or a tool's result block (``tool_result``, ``web_search_tool_result``...)."""
    return kind in _CALLS or (isinstance(kind, str) and kind.endswith("tool_result"))


# Result blocks read their own way; any other ``*tool_result`` block is read as ``tool_result``.
_RESULTS = {
    "tool_result": _tool_result,
    "web_fetch_tool_result": _web_fetch,
    "web_search_tool_result": _web_search,
}


def result_reference(
    call_id: str, block: dict[str, Any], tool: str | None, args: Any, options: ConvertOptions
) -> dict[str, Any]:
    """The reference one result block (``tool_result``, a server tool's ``*_tool_result``)
    becomes; shared with ``claude-agent``, whose messages hold the same blocks."""
    build = _RESULTS.get(str(block.get("type")), _tool_result)
    return build(call_id, block, tool, args, options)
