// The light vote page (amp/classroom/vote_routes.py).  Every text from the server goes in with
// textContent: a sentence or a reading is never read as markup.
"use strict";
(function () {
  const code = new URLSearchParams(location.search).get("poll") || "";
  const $poll = document.getElementById("poll");
  const $said = document.getElementById("said");
  let state = null;      // the server's view of the poll and of this browser's votes
  let pos = null;        // the sentence shown (items.length: all done)
  let editing = false;   // the form is open on a sentence already answered
  let message = null;    // {pos, kind, text}: the one message shown for a sentence

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else if (k === "on") node.addEventListener("click", v);
      else node.setAttribute(k, v);
    }
    for (const child of children) if (child) node.append(child);
    return node;
  }
  function box(kind, text) { return el("div", {class: "box " + kind, text: text}); }
  function say(kind, text) {
    $said.replaceChildren();
    if (text) $said.append(box(kind, text));
  }
  async function call(url, options) {
    let reply;
    try {
      reply = await fetch(url, Object.assign({credentials: "same-origin", cache: "no-store"}, options || {}));
    } catch (err) {
      return {ok: false, body: {error: "The app cannot be reached: check the network and try again."}};
    }
    let body = {};
    try { body = await reply.json(); } catch (err) { body = {error: "The app answered something unexpected."}; }
    return {ok: reply.ok, body: body};
  }
  async function load() {
    const got = await call("/vote/api/state?poll=" + encodeURIComponent(code));
    if (!got.ok) { $poll.replaceChildren(box("error", got.body.error || "The poll cannot be opened.")); return false; }
    state = got.body;
    const title = document.getElementById("title");
    title.textContent = state.title || "";
    title.hidden = !state.title;
    return true;
  }
  function words(i) { const v = state.votes[String(i)]; return v ? v.words : null; }
  function go(i) { pos = i; editing = false; say("", ""); render(); }
  function nav(row) {
    const n = state.items.length;
    if (pos > 0) row.append(el("button", {type: "button", text: "Previous sentence", on: () => go(pos - 1)}));
    row.append(el("button", {type: "button", text: pos + 1 < n ? "Next sentence" : "Finish", on: () => go(pos + 1)}));
  }
  function radios(name, legend, options, checked) {
    const set = el("fieldset", {}, el("legend", {text: legend}));
    options.forEach(([value, text]) => {
      const input = el("input", {type: "radio", name: name, value: String(value)});
      if (value === checked) input.checked = true;
      set.append(el("label", {}, input, el("span", {text: text})));
    });
    return set;
  }
  function render() {
    const n = state.items.length;
    if (state.closed) { $poll.replaceChildren(box("error", state.say.closed)); return; }
    if (pos === null) { pos = 0; while (pos < n && words(pos) !== null) pos += 1; }
    if (pos >= n) {
      const list = el("ol");
      state.items.forEach((it, i) => {
        const w = words(i);
        list.append(el("li", {text: "“" + it.surface + "” — " + (w ? "your answer: " + w : "not answered")
                                    + (state.revealed.includes(i) ? " (revealed: locked)" : "")}));
      });
      const row = el("div", {class: "row"}, el("button", {type: "button", text: "Review my answers", on: () => go(0)}));
      $poll.replaceChildren(box("success", state.say.done), list, row);
      return;
    }
    const item = state.items[pos];
    const parts = [el("p", {class: "caption", text: "Sentence " + (pos + 1) + " of " + n}),
                   el("progress", {max: String(n), value: String(pos), "aria-label": "Sentence " + (pos + 1) + " of " + n}),
                   el("h2", {text: item.surface})];
    const vote = state.votes[String(pos)];
    const mine = message && message.pos === pos ? message : null;
    const row = el("div", {class: "row"});
    if (state.revealed.includes(pos)) {
      parts.push(box(mine && mine.kind === "error" ? "error" : "info",
                     (mine && mine.kind === "error" ? mine.text + " " : "")
                     + (vote ? "Your answer: " + vote.words + ". " + state.say.locked : state.say.locked + " It takes no more answers.")));
      nav(row);
      $poll.replaceChildren(...parts, $said, row);
      return;
    }
    if (vote && !editing) {
      if (!mine) parts.push(box("info", "Your answer: " + vote.words + ". " + state.say.change));
      row.append(el("button", {type: "button", text: "Change my answer", on: () => { editing = true; say("", ""); render(); }}));
      nav(row);
      $poll.replaceChildren(...parts, $said, row);
      return;
    }
    const form = el("form", {novalidate: ""});
    form.append(radios("choice", state.say.choice, [[0, item.readings[0]], [1, item.readings[1]]], vote ? vote.choice : null));
    form.append(radios("confidence", state.say.confidence, [1, 2, 3].map((c) => [c, state.confidence[String(c)]]),
                       vote ? vote.confidence : 2));
    const submit = el("button", {type: "submit", class: "primary", text: "Submit"});
    const buttons = el("div", {class: "row"}, submit);
    if (vote) buttons.append(el("button", {type: "button", text: "Keep my answer", on: () => { editing = false; say("", ""); render(); }}));
    form.append($said, buttons);
    form.addEventListener("submit", (event) => { event.preventDefault(); answer(form, submit); });
    $poll.replaceChildren(...parts, form);
  }
  async function answer(form, submit) {
    const choice = form.querySelector('input[name="choice"]:checked');
    const confidence = form.querySelector('input[name="confidence"]:checked');
    if (!choice) { message = {pos: pos, kind: "warning", text: state.say.pick}; say("warning", state.say.pick); return; }
    submit.disabled = true;  // one message at a time: a double tap sends one answer
    const at = pos;
    const got = await call("/vote/api/answer", {method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({poll: state.code, item: at, choice: Number(choice.value),
                            confidence: Number(confidence ? confidence.value : 2)})});
    if (got.ok) {
      state.votes[String(at)] = got.body.vote;
      editing = false;
      message = {pos: at, kind: "success", text: got.body.message};
      render();
      say("success", got.body.message);
    } else {
      message = {pos: at, kind: "error", text: got.body.error || "Your answer was not recorded."};
      await load();
      render();
      say("error", message.text);
    }
  }
  async function refresh() {  // learn of a reveal or a closed poll; never while a form is being filled
    if (document.hidden || !state || $poll.querySelector("form")) return;
    const before = JSON.stringify([state.revealed, state.closed]);
    if (await load() && JSON.stringify([state.revealed, state.closed]) !== before) render();
  }
  load().then((ok) => { if (ok) { render(); setInterval(refresh, 10000); } });
  document.addEventListener("visibilitychange", refresh);
})();
