import CLuaShim

/// A function prepared for row-shaped calls: one table of named values in, a table out, keys
/// interned once. This is the per-object path of a migration: it skips building and hashing Swift
/// dictionaries for every object.
///
/// ```swift
/// let transform = try vm.prepareRowCall(policy, inputKeys: ["name", "photo"], outputKeys: ["title", "photo"])
/// let out = try vm.call(transform, ["soup", .bytes(photo)])   // [title, photo], or nil for no result
/// ```
package struct LuaRowCall: Sendable, Hashable {
  package let function: LuaFunction
  package let inputKeys: [String]
  package let outputKeys: [String]
  let inputReference: Int64
  let outputReference: Int64
}

extension LuaVM {
  /// Prepares `function` for ``call(_:_:)-(LuaRowCall,_)`` with these keys.
  package func prepareRowCall(_ function: LuaFunction, inputKeys: [String], outputKeys: [String]) throws(LuaError)
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
  package func call(_ row: LuaRowCall, _ values: [LuaValue]) throws(LuaError) -> [LuaValue]? {
    guard values.count <= row.inputKeys.count else {
      throw LuaError(kind: .badValue, message: "\(values.count) values for \(row.inputKeys.count) keys")
    }
    let results = try withCallBuffers(function: row.function, values: values) { (arguments, results) in
      mr_vm_call_row(state, row.function.reference, row.inputReference, arguments, row.outputReference, results)
    }
    return results.isEmpty ? nil : results
  }
}

/// How a column becomes a Lua value, or a Lua value is bound, in ``LuaVM/runRowLoop(_:select:insert:plainCount:inputs:outputs:limit:)``.
package enum LuaRowLoopKind: Sendable {
  package enum Input: Int8, Sendable {
    case integer = 0, boolean, real, date, text, bytes, other
  }

  package enum Output: Int8, Sendable {
    case integer = 0, boolean, real, text, uuid, blob, integer16, integer32, date
  }
}

/// Why a row loop returned.
package enum LuaRowLoopStop: Sendable, Equatable {
  /// The select has no more rows.
  case finished
  /// `limit` rows done.
  case paused
  /// The select is on a row whose inputs the host converts: it does that whole row.
  case hostRow
  /// The function's results for the row the select is on, by output position: the host converts
  /// and binds them after the plain columns (already bound) and runs the insert.
  case hostOutputs([LuaValue])
  /// The select failed, or the insert of the row with key `insertOf` (left unreset); the
  /// connection's message says why.
  case sqliteFailed(insertOf: Int64?)
}

extension LuaVM {
  /// Runs a bulk copy's row loop in C (see `mr_vm_row_loop`): `select` and `insert` are prepared
  /// `sqlite3_stmt` pointers of two connections (the inserts run on a second thread); the first `plainCount` columns of the select (Z_PK
  /// first) are bound unchanged, the next ones (as `inputs` say) go to the function under the row
  /// call's input keys after `__pk`, and its results (as `outputs` say) are bound after them. Each
  /// call runs under the limits; a Lua error throws. Returns the rows inserted and why it stopped.
  /// The function returns its results as values in output-key order (no table built per row).
  package func runRowLoop(
    _ row: LuaRowCall, select: OpaquePointer, insert: OpaquePointer, plainCount: Int,
    inputs: [LuaRowLoopKind.Input], outputs: [LuaRowLoopKind.Output], limit: Int
  ) throws(LuaError) -> (rows: Int, stop: LuaRowLoopStop) {
    guard row.function.vm == ObjectIdentifier(self), inputs.count + 1 <= row.inputKeys.count,
      outputs.count <= row.outputKeys.count
    else { throw LuaError(kind: .badValue, message: "the row loop does not fit the prepared call") }
    var rows: Int64 = 0
    var stop: Int32 = 0
    var failedKey: Int64 = 0
    mr_buf_reset(results)
    let inputKinds = inputs.map(\.rawValue)
    let outputKinds = outputs.map(\.rawValue)
    try guarded { () throws(LuaError) in
      let status = inputKinds.withUnsafeBufferPointer { inputBuffer in
        outputKinds.withUnsafeBufferPointer { outputBuffer in
          mr_vm_row_loop(
            state, row.function.reference, row.inputReference, row.outputReference,
            UnsafeMutableRawPointer(select),
            UnsafeMutableRawPointer(insert), Int32(plainCount), inputBuffer.baseAddress, Int32(inputs.count),
            outputBuffer.baseAddress, Int32(outputs.count), Int64(limit), &rows, &stop, &failedKey, results)
        }
      }
      try checkRowLoop(status, function: row.function)
    }
    let reason: LuaRowLoopStop =
      switch mr_loop_stop(rawValue: UInt32(stop)) {
      case MR_LOOP_DONE: .finished
      case MR_LOOP_LIMIT: .paused
      case MR_LOOP_ROW: .hostRow
      case MR_LOOP_OUTPUTS: .hostOutputs(resultValues(of: row.function))
      case MR_LOOP_INSERT: .sqliteFailed(insertOf: failedKey)
      default: .sqliteFailed(insertOf: nil)
      }
    return (Int(rows), reason)
  }
}
