import CLuaShim

/// A function prepared for row-shaped calls: one table of named values in, a table out, keys
/// interned once. This is the per-object path of a migration: it skips building and hashing Swift
/// dictionaries for every object.
///
/// ```swift
/// let transform = try vm.prepareRowCall(policy, inputKeys: ["name", "photo"], outputKeys: ["title", "photo"])
/// let out = try vm.call(transform, ["soup", .bytes(photo)])   // [title, photo], or nil for no result
/// ```
public struct LuaRowCall: Sendable, Hashable {
  public let function: LuaFunction
  public let inputKeys: [String]
  public let outputKeys: [String]
  let inputReference: Int64
  let outputReference: Int64
}

extension LuaVM {
  /// Prepares `function` for ``call(_:_:)-(LuaRowCall,_)`` with these keys.
  public func prepareRowCall(_ function: LuaFunction, inputKeys: [String], outputKeys: [String]) throws(LuaError)
    -> LuaRowCall
  {
    LuaRowCall(
      function: function, inputKeys: inputKeys, outputKeys: outputKeys, inputReference: try internKeys(inputKeys),
      outputReference: try internKeys(outputKeys))
  }

  /// Calls the function with a table of `values` under the input keys (a ``LuaValue/nil`` leaves the
  /// key out) and returns the fields of the table it returns, in output-key order (``LuaValue/nil``
  /// where absent) — or `nil` when it returns nothing or `nil`. Fields are read raw: no metamethod
  /// runs outside the limits.
  public func call(_ row: LuaRowCall, _ values: [LuaValue]) throws(LuaError) -> [LuaValue]? {
    guard values.count <= row.inputKeys.count else {
      throw LuaError(kind: .badValue, message: "\(values.count) values for \(row.inputKeys.count) keys")
    }
    let results = try withCallBuffers(function: row.function, values: values) { (arguments, results) in
      mr_vm_call_row(state, row.function.reference, row.inputReference, arguments, row.outputReference, results)
    }
    return results.isEmpty ? nil : results
  }
}
