// A first visit: once paired, what this browser may do, which camera it drives, and, on a demo
// daemon, that nothing real fires. Shown once a browser; Skip ends it too.
import { $, el, reconcile, setAttribute, setHidden, setText } from "./dom.js";

/** The steps of a first visit for this session, each a title and its words. */
export function onboardingSteps(state) {
  const session = state.session || { role: "viewer", permissions: [] };
  const may = session.role === "viewer" ? "watch what the cameras and runs do; shooting and changing things needs an operator code"
    : session.locked ? "watch and shoot; the daemon is locked, so settings and runs are its owner's"
    : "shoot, run time-lapses and video, and change the cameras' settings";
  const steps = [
    { id: "paired", title: "Paired", text: `This browser is paired as ${session.role === "viewer" ? "a viewer" : "an operator"}: it may ${may}. It stays paired until it is unpaired here or revoked on the daemon.` },
    { id: "camera", title: "Pick a camera", text: state.cameras.size ? "The page drives one camera, or a group of them. Pick one; the Cameras view changes it later." : "The daemon holds no camera yet: connect one with `unleashed connect`, or name modules in its configuration." },
  ];
  if (session.demo) {
    steps.push({ id: "demo", title: "Demo mode", text: "This daemon runs in demo mode: its camera is simulated, so every shot, run and setting works and nothing real fires. The DEMO badge at the top says so." });
  }
  return steps;
}

export function mountOnboarding({ store, actions }) {
  $("onboarding-next").addEventListener("click", () => actions.onboard(store.state.onboarding + 1));
  $("onboarding-skip").addEventListener("click", () => actions.onboard(null));
  const createCamera = () => {
    const use = el("button", { type: "button" });
    use.addEventListener("click", () => actions.setTarget(use.dataset.target));
    return el("li", {}, use);
  };
  let shown = null;
  let open = false;
  return function render(state) {
    const steps = onboardingSteps(state);
    const step = state.onboarding === null || state.onboarding === undefined ? null : steps[state.onboarding];
    setHidden($("onboarding"), !step);
    // While it is open, nothing behind it takes focus; set as it opens and closes only, so that
    // the menu's own hold on the same nodes is left alone in between.
    if (!!step !== open) {
      open = !!step;
      for (const node of [...$("app").children]) if (node.id !== "onboarding") node.inert = open;
      if (!open) $("main").focus({ preventScroll: true });
    }
    if (!step) { shown = null; return Infinity; }
    setText($("onboarding-step"), `${state.onboarding + 1} of ${steps.length}`);
    setText($("onboarding-title"), step.title);
    setText($("onboarding-text"), step.text);
    setText($("onboarding-next"), state.onboarding === steps.length - 1 ? "Done" : "Next");
    setHidden($("onboarding-skip"), state.onboarding === steps.length - 1);
    const cameras = step.id === "camera" ? [...state.cameras.keys()].map((name) => `camera:${name}`).concat(state.groups.map((g) => `group:${g.name}`)) : [];
    setHidden($("onboarding-cameras"), !cameras.length);
    reconcile($("onboarding-cameras"), cameras, (target) => target, createCamera, (node, target) => {
      const use = node.firstChild;
      use.dataset.target = target;
      setText(use, `${target.slice(target.indexOf(":") + 1)}${target.startsWith("group:") ? " (group)" : ""}`);
      setAttribute(use, "aria-pressed", String(state.target === target));
    });
    if (shown !== step.id) { shown = step.id; $("onboarding-title").tabIndex = -1; $("onboarding-title").focus(); }
    return Infinity;
  };
}
