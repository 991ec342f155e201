import SwiftSyntax

/// Functions a policy class calls that the sources declare outside it: free functions and methods
/// of extensions (`extension NSManagedObjectContext { func findOrCreateMaker(withName:in:) … }`, the
/// book's way of finding or making an object). A class's module gets each one it calls, translated
/// as a function of the module (an extension's `self` its first parameter).
final class HelperFunctions {
  struct Helper {
    var node: FunctionDeclSyntax
    /// The extended type, or nil for a free function.
    var extending: String?
    var reader: PortReader
    var lua: String
    /// A type's `static func` (called as `Self.f(…)`, `Type.f(…)` or `f(…)`): no `self`.
    var isStatic: Bool

    /// What `self` is in it, in Lua: a context is the manager (or a stage's context).
    var selfKind: LuaKind {
      switch extending {
      case "NSManagedObjectContext": return .context(receiver: "self_", source: false)
      case nil: return .unknown
      default: return .object
      }
    }
  }

  private(set) var byName: [String: Helper] = [:]
  /// The helpers a class's translation called, in the order first called.
  private(set) var used: [String] = []

  func add(_ node: FunctionDeclSyntax, extending type: String?, reader: PortReader) {
    let name = node.name.text
    guard byName[name] == nil else { return }
    let isStatic = node.modifiers.contains { ["static", "class"].contains($0.name.text) }
    byName[name] = Helper(
      node: node, extending: isStatic ? nil : type, reader: reader, lua: PolicyClassWriter.luaName(node),
      isStatic: isStatic)
  }

  /// The helper `name`, noted as used; nil when the sources declare none (or `isMethod` says a
  /// method call where the helper is a free function or a static one, or the reverse).
  func use(_ name: String, isMethod: Bool) -> Helper? {
    guard let helper = byName[name], (helper.extending != nil) == isMethod else { return nil }
    if !used.contains(name) { used.append(name) }
    return helper
  }

  /// Starts a class: none used yet.
  func reset() { used = [] }
}
