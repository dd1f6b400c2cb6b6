"""The labelling page: one HTML document, its style and script inline, nothing fetched from
anywhere but the local server it came from.

Session text is hostile (the trajectory is web text an agent pulled), so it never passes
through HTML: the script asks the server for the session as JSON and builds the page with DOM
calls that set ``textContent``; the only markup is this file's. The content security policy
allows this document's own style and script (by nonce) and requests to its own origin, nothing
else: no inline handler, no image, no frame, no form post.
"""

from __future__ import annotations

import html

STYLE = """
body { font: 15px/1.5 system-ui, sans-serif; margin: 0; color: #1b1b1b; background: #fafafa; }
header { position: sticky; top: 0; background: #fff; border-bottom: 1px solid #ddd;
  padding: 8px 16px; display: flex; gap: 16px; align-items: center; flex-wrap: wrap; }
main { max-width: 920px; margin: 0 auto; padding: 16px; }
h2 { font-size: 15px; text-transform: uppercase; letter-spacing: .04em; color: #555;
  margin: 20px 0 6px; }
#question { font-size: 18px; font-weight: 600; white-space: pre-wrap; }
#answer { white-space: pre-wrap; background: #fff; border: 1px solid #ddd; padding: 12px; }
#answer a.cite { font-weight: 600; text-decoration: none; }
details { background: #fff; border: 1px solid #ddd; margin: 6px 0; padding: 6px 10px; }
details.target { outline: 2px solid #2a6df4; }
summary { cursor: pointer; }
.meta { color: #555; font-size: 13px; margin-left: 6px; }
.content { white-space: pre-wrap; font-size: 14px; margin-top: 6px; }
.hidden { display: none; }
#status { color: #1a7f37; }
#status.error { color: #b00020; }
#judge { border-left: 4px solid #999; padding: 6px 10px; background: #fff; }
#help { position: fixed; inset: 20% 25%; background: #fff; border: 1px solid #444;
  padding: 16px 24px; box-shadow: 0 4px 24px rgba(0,0,0,.2); }
kbd { border: 1px solid #aaa; border-radius: 3px; padding: 0 4px; background: #f3f3f3; }
textarea { width: 100%; min-height: 2.5em; }
"""

SCRIPT = r"""
"use strict";
const TOKEN = document.querySelector('meta[name="label-token"]').content;
let current = null;

async function api(path, body) {
  const options = {headers: {"X-Label-Token": TOKEN}};
  if (body !== undefined) {
    options.method = "POST";
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
}

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function say(text, error) {
  const status = document.getElementById("status");
  status.textContent = text;
  status.className = error ? "error" : "";
}

function safeHref(url) {
  // Only web links become links; anything else (javascript:, data:) stays text.
  try {
    const parsed = new URL(url);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
  } catch (e) { return null; }
}

function openReference(index) {
  const details = document.getElementById("ref-" + index);
  if (!details) return;
  document.querySelectorAll("details.target").forEach(d => d.classList.remove("target"));
  details.open = true;
  details.classList.add("target");
  details.scrollIntoView({block: "nearest"});
}

function renderAnswer(text, refs) {
  const answer = document.getElementById("answer");
  answer.replaceChildren();
  const index = new Map(refs.map((r, i) => [r.id, i]));
  const marker = /\[([^\[\]\n]{1,200})\]/g;
  let last = 0, match;
  while ((match = marker.exec(text)) !== null) {
    const ids = match[1].split(",").map(s => s.trim());
    if (!ids.every(id => index.has(id))) continue;
    answer.append(document.createTextNode(text.slice(last, match.index)));
    answer.append(document.createTextNode("["));
    ids.forEach((id, k) => {
      if (k) answer.append(document.createTextNode(", "));
      const link = el("a", id, "cite");
      link.href = "#ref-" + index.get(id);
      link.dataset.ref = String(index.get(id));
      link.addEventListener("click", e => { e.preventDefault(); openReference(index.get(id)); });
      answer.append(link);
    });
    answer.append(document.createTextNode("]"));
    last = match.index + match[0].length;
  }
  answer.append(document.createTextNode(text.slice(last)));
}

function renderReferences(refs) {
  const list = document.getElementById("references");
  list.replaceChildren();
  if (!refs.length) list.append(el("p", "No references in the trajectory."));
  refs.forEach((r, i) => {
    const details = el("details");
    details.id = "ref-" + i;
    details.dataset.search = [r.id, r.title || "", r.url || "", r.tool || "", r.content]
      .join("\n").toLowerCase();
    const summary = el("summary");
    summary.append(el("strong", r.id));
    if (r.title) summary.append(el("span", r.title, "meta"));
    if (r.tool) summary.append(el("span", "tool: " + r.tool, "meta"));
    details.append(summary);
    if (r.url) {
      const href = safeHref(r.url);
      const line = el("div", null, "meta");
      if (href) {
        const link = el("a", r.url);
        link.href = href;
        link.rel = "noopener noreferrer";
        link.target = "_blank";
        line.append(link);
      } else {
        line.textContent = r.url;
      }
      details.append(line);
    }
    details.append(el("div", r.content, "content"));
    list.append(details);
  });
  filterReferences();
}

function filterReferences() {
  const query = document.getElementById("search").value.trim().toLowerCase();
  let shown = 0;
  document.querySelectorAll("#references details").forEach(d => {
    const hit = !query || d.dataset.search.includes(query);
    d.classList.toggle("hidden", !hit);
    if (query && hit) d.open = true;
    shown += hit ? 1 : 0;
  });
  document.getElementById("matches").textContent = query ? shown + " match" : "";
}

function render(state) {
  document.getElementById("progress").textContent = state.progress;
  current = state.session;
  const done = document.getElementById("done");
  const view = document.getElementById("session");
  if (!current) {
    done.classList.remove("hidden");
    view.classList.add("hidden");
    return;
  }
  done.classList.add("hidden");
  view.classList.remove("hidden");
  document.getElementById("session-id").textContent = current.session_id;
  document.getElementById("question").textContent = current.question;
  renderAnswer(current.answer, current.references);
  renderReferences(current.references);
  const judge = document.getElementById("judge");
  judge.replaceChildren();
  judge.classList.toggle("hidden", !current.judge);
  if (current.judge) {
    judge.append(el("strong", "Judge verdict: " + (current.judge.verdict || "none")));
    current.judge.reasons.forEach(r => judge.append(el("div", r)));
  }
  document.getElementById("note").value = "";
  window.scrollTo(0, 0);
}

async function act(path, body) {
  try {
    const state = await api(path, body);
    render(state);
    return state;
  } catch (e) {
    say(e.message, true);
    return null;
  }
}

async function label(verdict) {
  if (!current) return;
  const sid = current.session_id;
  const note = document.getElementById("note").value;
  if (await act("/api/label", {session_id: sid, label: verdict, note: note}))
    say("saved: " + sid + " " + verdict);
}

async function skip() {
  if (!current) return;
  const sid = current.session_id;
  if (await act("/api/skip", {session_id: sid})) say("skipped: " + sid);
}

async function undo() {
  const state = await act("/api/undo", {});
  if (state) say("undone: " + (state.session ? state.session.session_id : ""));
}

function toggleHelp() { document.getElementById("help").classList.toggle("hidden"); }

document.addEventListener("keydown", e => {
  if (e.target.matches("input, textarea")) {
    if (e.key === "Escape") e.target.blur();
    return;
  }
  if (e.ctrlKey || e.metaKey || e.altKey) return;
  const actions = {p: () => label("pass"), f: () => label("fail"), s: skip, u: undo,
                   "?": toggleHelp, n: () => document.getElementById("note").focus(),
                   "/": () => document.getElementById("search").focus(),
                   Escape: () => document.getElementById("help").classList.add("hidden")};
  const action = actions[e.key];
  if (action) { e.preventDefault(); action(); }
});
document.getElementById("search").addEventListener("input", filterReferences);
document.getElementById("pass").addEventListener("click", () => label("pass"));
document.getElementById("fail").addEventListener("click", () => label("fail"));
document.getElementById("skip").addEventListener("click", skip);
document.getElementById("undo").addEventListener("click", undo);
document.getElementById("help-button").addEventListener("click", toggleHelp);
api("/api/state").then(render).catch(e => say(e.message, true));
"""

BODY = """
<header>
  <strong>research-judge label</strong>
  <span id="progress">loading</span>
  <span>annotator: <span id="annotator">{annotator}</span></span>
  <button id="pass" type="button"><kbd>p</kbd> pass</button>
  <button id="fail" type="button"><kbd>f</kbd> fail</button>
  <button id="skip" type="button"><kbd>s</kbd> skip</button>
  <button id="undo" type="button"><kbd>u</kbd> undo</button>
  <button id="help-button" type="button"><kbd>?</kbd> help</button>
  <span id="status" role="status"></span>
</header>
<main>
  <p id="done" class="hidden">Every session in the queue is labelled. The labels are in
  {labels}; close this page and stop the command with Ctrl-C.</p>
  <div id="session">
    <div class="meta">session <span id="session-id"></span></div>
    <h2>Question</h2>
    <div id="question"></div>
    <h2>Answer</h2>
    <div id="answer"></div>
    <div id="judge" class="hidden"></div>
    <h2>Note (optional, saved with the label)</h2>
    <textarea id="note" placeholder="n to write a note, Esc to leave it"></textarea>
    <h2>Trajectory</h2>
    <input id="search" type="search" placeholder="search the references (/)">
    <span id="matches" class="meta"></span>
    <div id="references"></div>
  </div>
</main>
<div id="help" class="hidden">
  <h2>Keys</h2>
  <p><kbd>p</kbd> pass and <kbd>f</kbd> fail save the label at once and show the next session;
  <kbd>s</kbd> skips it (it comes back at the end); <kbd>u</kbd> undoes the last label saved
  in this run; <kbd>n</kbd> writes a note, <kbd>/</kbd> searches the references,
  <kbd>Esc</kbd> leaves a text box; <kbd>?</kbd> shows or hides this help.</p>
  <p>Label what you see: the answer against the question and the references it cites.</p>
</div>
"""


def render_page(*, token: str, nonce: str, annotator: str, labels_path: str) -> str:
    body = BODY.format(annotator=html.escape(annotator), labels=html.escape(labels_path))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta name="label-token" content="{html.escape(token)}">'
        "<title>research-judge label</title>"
        f'<style nonce="{nonce}">{STYLE}</style></head><body>{body}'
        f'<script nonce="{nonce}">{SCRIPT}</script></body></html>\n'
    )


def content_security_policy(nonce: str) -> str:
    return (
        f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
        "connect-src 'self'; img-src 'none'; base-uri 'none'; form-action 'none'; "
        "frame-ancestors 'none'"
    )
