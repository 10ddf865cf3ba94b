// Small DOM helpers the views share. Text is always set as text, never as HTML.

export const $ = (id) => document.getElementById(id);

/** An element with attributes and children. */
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "text") node.textContent = value;
    else if (key === "className") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

/** Sets a node's text only when it changes: a screen reader hears changes only, and an unchanged
 *  view costs no layout. */
export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/** Sets an attribute only when it changes; null removes it. */
export function setAttribute(node, name, value) {
  if (value === null || value === undefined) { if (node.hasAttribute(name)) node.removeAttribute(name); return; }
  if (node.getAttribute(name) !== String(value)) node.setAttribute(name, String(value));
}

export function setHidden(node, hidden) {
  if (node.hidden !== hidden) node.hidden = hidden;
}

/**
 * Makes `container`'s children one per item, in order, keyed by `key(item)`: an item's node is
 * made once by `create(item)` and brought up to date by `update(node, item)` on every render, so
 * a list that changes by one entry changes one node, and focus and scroll stay where they were.
 */
export function reconcile(container, items, key, create, update) {
  const existing = new Map();
  for (const node of container.children) if (node.dataset.key !== undefined) existing.set(node.dataset.key, node);
  let cursor = container.firstElementChild;
  for (const item of items) {
    const id = String(key(item));
    let node = existing.get(id);
    if (node) existing.delete(id);
    else { node = create(item); node.dataset.key = id; }
    update(node, item);
    if (node !== cursor) container.insertBefore(node, cursor);
    else cursor = cursor.nextElementSibling;
  }
  for (const node of existing.values()) node.remove();
  // What was not keyed (a placeholder) goes too.
  for (const node of [...container.children]) if (node.dataset.key === undefined) node.remove();
}

/** A message under a control: its text, its kind, and buttons that act on it. */
export function renderMessage(node, message) {
  const text = (message && message.text) || "";
  const kind = text ? (message.kind || "error") : "";
  const actions = (message && message.actions) || [];
  const signature = JSON.stringify([text, kind, actions.map((a) => a.label)]);
  if (node.dataset.shown === signature) return;
  node.dataset.shown = signature;
  // The node keeps its own classes (a banner, say); only its kind changes.
  node.classList.add("message");
  node.classList.remove("error", "ok");
  if (kind) node.classList.add(kind);
  node.replaceChildren(text, ...actions.map((action) => el("button", { type: "button", className: "nearest", text: action.label, onclick: action.run })));
}

/** A radio group of state buttons: one checked, arrow keys move, `changed` hears the value. */
export function radioGroup(container, changed) {
  const buttons = [...container.querySelectorAll("[data-value]")];
  const select = (value, notify = true) => {
    for (const button of buttons) {
      const on = button.dataset.value === value;
      setAttribute(button, "aria-checked", String(on));
      button.tabIndex = on ? 0 : -1;
    }
    container.dataset.value = value;
    if (notify && changed) changed(value);
  };
  for (const button of buttons) {
    button.addEventListener("click", () => select(button.dataset.value));
    button.addEventListener("keydown", (event) => {
      const step = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 }[event.key];
      if (!step) return;
      event.preventDefault();
      const next = buttons[(buttons.indexOf(button) + step + buttons.length) % buttons.length];
      select(next.dataset.value);
      next.focus();
    });
  }
  const initial = buttons.find((b) => b.getAttribute("aria-checked") === "true") || buttons[0];
  select(initial.dataset.value, false);
  return { get value() { return container.dataset.value; }, select };
}

/** A button that does `action` only when pressed twice within three seconds: for what cannot be undone. */
export function confirmTwice(button, prompt, action) {
  let armed = null;
  const label = button.textContent;
  button.addEventListener("click", () => {
    if (armed) {
      clearTimeout(armed);
      armed = null;
      button.textContent = label;
      action();
      return;
    }
    button.textContent = prompt;
    armed = setTimeout(() => { armed = null; button.textContent = label; }, 3000);
  });
}
