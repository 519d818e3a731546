// Release gating: which OpenClaw releases this engine serves (tested ones always; untested ones
// whose Tool Search module passed every structural check, unless requireTestedRelease), and what
// the seam reports: each patched module with its release, each module it refused and why, and a
// seam with no enabled plugin behind it. Each reason is said once in OpenClaw's log.
import { openclawDiagnostics } from './diagnostics.mjs'
import { releaseSupport } from './seam.mjs'

/** The seam is in place but the plugin never enabled the engine: say so once, serve nothing. */
export function inactive(engine) {
  if (engine.settings === undefined) {
    engine.warnOnce(
      'inactive',
      'the seam is installed (--import) but the plugin is not enabled in this process ' +
        "(plugins.entries.openclaw-tool-search); OpenClaw's built-in Tool Search serves it",
    )
  }
  return undefined
}

/**
 * The patched module says it was evaluated, with its release: the version, its support
 * (`tested` / `untested`) and the release cases the seam found (seam.mjs RELEASE_CASES). The
 * first one also finds OpenClaw's diagnostic events (engine.emitDiagnostic) in its package.
 */
export function seamLoaded(engine, url, release) {
  engine.seamModules.push({ url, release: typeof release === 'string' ? { version: release } : release })
  if (engine.emitDiagnostic === undefined) {
    engine.emitDiagnostic = null
    openclawDiagnostics(url).then(
      (emit) => {
        engine.emitDiagnostic = emit
      },
      () => {},
    )
  }
}

/**
 * Whether this engine serves a module of this OpenClaw release: a tested release always; an
 * untested one (newer, a beta, a hot fix) whose module passed every structural check unless
 * `requireTestedRelease` is set. Says which, once per version, in OpenClaw's log.
 */
export function releaseAllowed(engine, version) {
  if (typeof version !== 'string' || engine.settings === undefined) return true
  const known = engine.releases.get(version)
  if (known !== undefined) return known
  const release = releaseSupport(version)
  let allowed = release.support !== 'unsupported'
  if (release.support === 'unsupported') {
    engine.seamRefused(release.reason)
  } else if (release.support === 'untested' && engine.settings.requireTestedRelease) {
    allowed = false
    engine.seamRefused(`${release.reason}, and requireTestedRelease is set`)
  } else if (release.support === 'untested') {
    engine.warnOnce(
      `untested:${version}`,
      `${release.reason}: served natively because every structural check of its Tool Search module passed ` +
        "(set requireTestedRelease: true to keep OpenClaw's built-in Tool Search on untested releases)",
    )
  }
  engine.releases.set(version, allowed)
  return allowed
}

/** One line, whoever notices first (the plugin or the load hook), for one reason. */
export function seamRefused(engine, reason) {
  engine.warnOnce(`seam:${reason}`, `OpenClaw's own Tool Search was left in place: ${reason}`)
}

/** Reports what the load hook does with OpenClaw's Tool Search module, now and later. */
export function watchSeam(engine, state) {
  if (engine.watching) return
  engine.watching = true
  const report = (module) => {
    if (!module.patched) engine.seamRefused(module.reason)
  }
  for (const module of state.modules) report(module)
  state.listeners.add(report)
}
