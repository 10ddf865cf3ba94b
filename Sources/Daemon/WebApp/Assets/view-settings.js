// The camera's settings as pickers: a row to swipe for the exposure settings and long lists, a
// column for short ones. A row opens with its value centred, and a swipe that comes to rest
// selects the value it rests on, as the module's own app does; a tap selects too.
import { $, el, reconcile, renderMessage, setAttribute, setText } from "./dom.js";
import { shownCamera } from "./model.js";

export const SETTING_TITLES = { "shutter-speed": "Shutter speed", iso: "ISO", aperture: "Aperture", "exposure-compensation": "Exposure compensation", "white-balance": "White balance", "drive-mode": "Drive mode", "focus-mode": "Focus mode", "image-format": "Image format" };
const TYPED = new Set(["iso", "shutter-speed", "aperture", "exposure-compensation"]);
const horizontal = (setting) => TYPED.has(setting.setting) || setting.choices.length > 8;

/** The choice whose centre is nearest the row's centre: what a swipe came to rest on. */
function restingChoice(picker) {
  const middle = picker.scrollLeft + picker.clientWidth / 2;
  let best = null;
  for (const button of picker.children) {
    const distance = Math.abs(button.offsetLeft + button.offsetWidth / 2 - middle);
    if (!best || distance < best.distance) best = { button, distance };
  }
  return best && best.button;
}

/** Scrolls a row so that its selected choice is in the middle; says so to the swipe handler, so
 *  that this scroll selects nothing. */
function centre(picker) {
  const selected = picker.querySelector('[aria-pressed="true"]');
  if (!selected || !picker.clientWidth) return false;
  const left = Math.max(0, Math.min(picker.scrollWidth - picker.clientWidth, selected.offsetLeft - (picker.clientWidth - selected.offsetWidth) / 2));
  if (Math.abs(picker.scrollLeft - left) >= 1) {
    picker.dataset.centring = "1";
    picker.scrollLeft = left;
  }
  picker.dataset.centred = selected.dataset.raw;
  return true;
}

export function mountSettings({ store, actions }) {
  const create = (setting) => {
    const title = SETTING_TITLES[setting.setting] || setting.setting;
    const message = el("p", { className: "message", role: "alert" });
    const box = el("div", { className: "setting", "data-setting": setting.setting },
      el("div", { className: "setting-head" }, el("span", { text: title }), el("strong", { text: setting.value })));
    if (setting.readOnly) {
      box.append(el("p", { className: "muted small", text: "Read-only on this camera." }), message);
      return box;
    }
    const picker = el("div", { className: horizontal(setting) ? "hpicker" : "vpicker", role: "group", "aria-label": title });
    const camera = () => box.dataset.camera;
    for (const choice of setting.choices) {
      picker.append(el("button", {
        type: "button", "aria-pressed": "false", "data-raw": String(choice.raw), "data-needs": "operate", text: choice.value,
        onclick: () => actions.setValue(camera(), setting.setting, { raw: choice.raw }, `setting:${setting.setting}`),
      }));
    }
    if (horizontal(setting)) {
      picker.addEventListener("scrollend", () => {
        if (picker.dataset.centring) { delete picker.dataset.centring; return; }
        const resting = restingChoice(picker);
        if (!resting || resting.disabled || resting.getAttribute("aria-pressed") === "true") return;
        picker.dataset.centred = resting.dataset.raw;
        actions.setValue(camera(), setting.setting, { raw: Number(resting.dataset.raw) }, `setting:${setting.setting}`);
      });
    }
    box.append(picker);
    if (TYPED.has(setting.setting)) {
      const input = el("input", { type: "text", "aria-label": `Other ${title.toLowerCase()}`, placeholder: "other value", "data-needs": "operate" });
      const form = el("form", { className: "other-value", novalidate: true }, input, el("button", { type: "submit", text: "Set", "data-needs": "operate" }));
      form.addEventListener("submit", (event) => {
        event.preventDefault();
        if (input.value.trim()) actions.setValue(camera(), setting.setting, { value: input.value.trim() }, `setting:${setting.setting}`);
      });
      box.append(form);
    }
    box.append(message);
    return box;
  };

  let visible = false;
  return function render(state) {
    const showing = state.view === "settings";
    const appeared = showing && !visible;
    visible = showing;
    if (!showing) return Infinity;
    renderMessage($("settings-message"), state.messages.settings);
    const name = shownCamera(state);
    const list = $("settings-list");
    const settings = name ? state.settings.get(name) : undefined;
    if (!name || settings === undefined) {
      list.replaceChildren(el("p", { className: "muted", text: name ? "Reading the camera's settings…" : "No camera." }));
      return Infinity;
    }
    if (!settings.length) {
      list.replaceChildren(el("p", { className: "muted", text: `${name} offers no settings to read or change.` }));
      return Infinity;
    }
    // A setting whose choices change (another lens, another mode) is made again.
    const key = (setting) => `${name}/${setting.setting}/${setting.readOnly ? "r" : "w"}/${(setting.choices || []).map((c) => c.raw).join(",")}`;
    reconcile(list, settings, key, create, (box, setting) => {
      box.dataset.camera = name;
      setText(box.querySelector(".setting-head strong"), setting.value);
      for (const option of box.querySelectorAll("button[data-raw]")) setAttribute(option, "aria-pressed", String(Number(option.dataset.raw) === setting.raw));
      renderMessage(box.querySelector(".message"), state.messages[`setting:${setting.setting}`]);
    });
    // A row shows its value in the middle when the view appears and when the value changes.
    for (const picker of list.querySelectorAll(".hpicker")) {
      const selected = picker.querySelector('[aria-pressed="true"]');
      if (appeared || (selected && picker.dataset.centred !== selected.dataset.raw)) centre(picker);
    }
    return Infinity;
  };
}
