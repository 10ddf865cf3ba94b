// The daemon's cameras and groups, each one tap from being the target.
import { $, el, reconcile, setAttribute, setText } from "./dom.js";

export function mountCameras({ actions }) {
  const create = () => {
    const use = el("button", { type: "button" });
    use.addEventListener("click", () => { actions.setTarget(use.dataset.target); actions.showView("photo"); });
    return el("li", {}, el("div", { className: "title" }, el("span", {}), el("span", { className: "muted" })), el("div", { className: "muted small" }), use);
  };
  const update = (node, item) => {
    const [title, facts, use] = node.children;
    setText(title.children[0], item.title);
    setText(title.children[1], item.state);
    setText(facts, item.facts);
    use.dataset.target = item.target;
    setText(use, item.inUse ? "In use" : "Use");
    setAttribute(use, "aria-pressed", String(item.inUse));
  };
  return function render(state) {
    if (state.view !== "cameras") return Infinity;
    const items = [];
    for (const camera of state.cameras.values()) {
      const status = camera.status || {};
      const identity = camera.identity || {};
      const battery = status.cameraBattery !== undefined && status.cameraBattery !== null ? `battery ${status.cameraBattery} %` : null;
      items.push({ target: `camera:${camera.name}`, title: camera.name, state: status.connection || camera.error || "",
        facts: [identity.cameraModel, identity.name, camera.source, battery].filter(Boolean).join(" · ") });
    }
    for (const group of state.groups) items.push({ target: `group:${group.name}`, title: group.name, state: "group", facts: group.cameras.join(", ") });
    for (const item of items) item.inUse = state.target === item.target;
    const list = $("camera-list");
    if (!items.length) {
      list.replaceChildren(el("li", { className: "muted", text: "The daemon holds no camera yet. Connect one with `unleashed connect` or list modules in its configuration." }));
      return Infinity;
    }
    reconcile(list, items, (item) => item.target, create, update);
    return Infinity;
  };
}
