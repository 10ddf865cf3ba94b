// This browser: its theme, who the daemon says it is, unpairing; and for an operator, the
// browsers paired with the daemon, a viewer code to hand a friend, and revoking a lost phone.
import { $, confirmTwice, el, radioGroup, reconcile, renderMessage, setAttribute, setHidden, setText } from "./dom.js";
import { can, hostClockWords } from "./model.js";

export function mountBrowser({ store, actions }) {
  const theme = radioGroup($("theme"), (value) => actions.setTheme(value));
  theme.select(store.state.theme, false);
  confirmTwice($("logout"), "Tap again to unpair", () => actions.logout());
  $("make-viewer-code").addEventListener("click", () => actions.makeCode("viewer"));
  $("list-browsers").addEventListener("click", () => actions.loadBrowsers());
  $("notify-ask").addEventListener("click", () => actions.askToNotify());
  $("geotag-toggle").addEventListener("click", () => actions.geotag($("geotag-toggle").getAttribute("aria-pressed") !== "true"));

  const createClient = () => {
    const revoke = el("button", { type: "button", className: "danger", text: "Revoke", "data-needs": "access" });
    confirmTwice(revoke, "Tap again to revoke", () => actions.revokeBrowser(revoke.dataset.client));
    return el("li", {}, el("div", { className: "title" }, el("span", {}), el("span", { className: "muted" })), el("div", { className: "muted small" }), revoke);
  };

  return function render(state) {
    if (state.view !== "app") return Infinity;
    const session = state.session;
    if (!session) return Infinity;
    const facts = [["Name", session.name], ["Role", session.role], ["May", session.permissions.join(", ") || "nothing"],
      ["Daemon", `unleashed ${session.version}${session.locked ? " (locked)" : ""}`]];
    const signature = JSON.stringify(facts);
    if ($("session-facts").dataset.shown !== signature) {
      $("session-facts").dataset.shown = signature;
      $("session-facts").replaceChildren(...facts.flatMap(([term, value]) => [el("dt", { text: term }), el("dd", { text: value })]));
    }
    const field = state.field || {};
    const notify = { granted: "Runs that end are told here and, when the page is out of sight, in a notification.",
      denied: "Notifications are blocked for this page in the browser's settings; runs that end are told in the page.",
      default: "Runs that end are told in the page; tap to be notified when it is out of sight too.",
      insecure: "Runs that end are told in the page. Notifications need the page over HTTPS ([web] certificate, docs/web-app.md).",
      unsupported: "Runs that end are told in the page; this browser has no notifications." }[field.notify] || "";
    setText($("notify-state"), notify);
    setHidden($("notify-ask"), field.notify !== "default");
    const geotagging = field.geotag !== "off" && field.geotag !== undefined;
    setAttribute($("geotag-toggle"), "aria-pressed", String(geotagging));
    // Turning it on sends positions to the cameras (operate); turning it off is this phone's own.
    const mayStart = can(state, "operate") && state.live === "open";
    if ($("geotag-toggle").disabled !== (!geotagging && !mayStart)) $("geotag-toggle").disabled = !geotagging && !mayStart;
    setText($("geotag-state"), field.geotagWhy || "Pictures carry no position from this phone.");
    setText($("clock-state"), hostClockWords(state));
    // Unpairing is the daemon's to allow: a locked daemon keeps a stand's phone paired.
    setHidden($("logout"), !can(state, "leave"));
    setHidden($("logout-locked"), can(state, "leave"));

    const operator = can(state, "access");
    setHidden($("browsers"), !operator);
    if (!operator) return Infinity;
    const code = state.viewerCode;
    setHidden($("viewer-code"), !code);
    if (code) {
      setText($("viewer-code-digits"), `${code.code.slice(0, 3)} ${code.code.slice(3)}`);
      setText($("viewer-code-expires"), `Give it to the person with the other phone: it pairs one browser as a viewer, until ${new Date(Date.parse(code.expires) - state.clockOffset).toLocaleTimeString()}.`);
    }
    renderMessage($("browsers-message"), state.messages.browsers);
    const clients = state.browsers || [];
    reconcile($("browser-list"), clients, (client) => client.id, createClient, (node, client) => {
      const [title, facts, revoke] = node.children;
      setText(title.children[0], `${client.name}${session.client === client.id ? " (this browser)" : ""}`);
      setText(title.children[1], client.role);
      setText(facts, `paired ${new Date(Date.parse(client.paired) - state.clockOffset).toLocaleString()} · ${client.id}`);
      revoke.dataset.client = client.id;
      setHidden(revoke, session.client === client.id);
    });
    return Infinity;
  };
}
