'use strict'
// The package's classes (ToolCatalog in js/catalog.js, ToolSearchSession in js/session.js) are JS
// classes holding a native instance, with each member written out: it calls the native member,
// inside a telemetry span where there is one, and answers a native catalog in its public form.
// This file covers an addon newer than those files: a member of the native class that its public
// class does not define is forwarded as it is (public instances among the arguments unwrapped, a
// native catalog answered wrapped), so none goes missing at run time. The tests require the list
// of members forwarded so to be empty: each member is written out on purpose.

/** Own properties every function has: not members of a class's API. */
const FUNCTION_KEYS = new Set(/** @type {PropertyKey[]} */ (['length', 'name', 'prototype', 'arguments', 'caller']))

/**
 * Defines on `Public` (statics) and `Public.prototype` a forwarder for each own member of
 * `Native` and `Native.prototype` that it does not define itself. `toNative(value)`: a public
 * instance's native object, any other value as it is; `toPublic(value)`: a native answer's public
 * form. Returns the names forwarded so (statics as `static name`).
 * @param {Function} Public
 * @param {Function} Native
 * @param {(value: unknown) => unknown} toNative
 * @param {(value: unknown) => unknown} toPublic
 * @returns {string[]}
 */
function forwardMissing(Public, Native, toNative, toPublic) {
  const forwarded = []
  const answer = (result) => (result !== null && typeof result === 'object' && typeof result.then === 'function' ? result.then(toPublic) : toPublic(result))
  for (const isStatic of [true, false]) {
    const source = isStatic ? Native : Native.prototype
    const target = isStatic ? Public : Public.prototype
    /** The native receiver: the class itself for a static, else the instance's native object. */
    const receiver = isStatic ? () => Native : toNative
    for (const key of Reflect.ownKeys(source)) {
      if ((isStatic && FUNCTION_KEYS.has(key)) || (!isStatic && key === 'constructor') || Object.hasOwn(target, key)) continue
      const member = /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(source, key))
      const name = String(key)
      /** @type {PropertyDescriptor} */
      let forwarder
      if (member.get || member.set) {
        const { get, set } = member
        forwarder = {
          configurable: true,
          enumerable: member.enumerable,
          get: get && named(`get ${name}`, function () {
            return toPublic(get.call(receiver(this)))
          }),
          set: set && named(`set ${name}`, function (value) {
            set.call(receiver(this), toNative(value))
          }),
        }
      } else if (typeof member.value === 'function') {
        const method = member.value
        forwarder = {
          configurable: true,
          writable: true,
          enumerable: member.enumerable,
          value: named(name, function (...args) {
            return answer(Reflect.apply(method, receiver(this), args.map(toNative)))
          }),
        }
      } else {
        forwarder = { ...member, value: toPublic(member.value) }
      }
      Object.defineProperty(target, key, forwarder)
      forwarded.push(isStatic ? `static ${name}` : name)
    }
  }
  return forwarded
}

/** `fn`, named `name` (as stack traces and `inspect` show it). */
function named(name, fn) {
  return Object.defineProperty(fn, 'name', { value: name })
}

module.exports = { forwardMissing }
