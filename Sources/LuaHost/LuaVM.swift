import CLuaShim
import FileDoors
import Foundation

/// A sandboxed Lua 5.4 virtual machine: loads scripts, calls their functions, and offers Swift
/// functions to them.
///
/// One VM owns one `lua_State`; it is not thread-safe (not `Sendable`): use it from one thread, or
/// make one per thread. Every script runs in its own environment with the sandbox's libraries
/// (no files, processes, `debug` or bytecode; see docs/policies.md, "Lua scripts: the sandbox"), under ``limits``.
///
/// ```swift
/// let vm = try LuaVM(modulePaths: [URL(fileURLWithPath: "policies")])
/// let policy = try vm.run(file: URL(fileURLWithPath: "policies/upper.lua"))
/// let upper = try #require(policy.first?.functionValue)
/// try vm.call(upper, ["soup"])   // ["SOUP"]
/// ```
package final class LuaVM {
  /// A Swift function scripts can call. Throwing raises a Lua error with the error's description.
  package typealias HostFunction = ([LuaValue]) throws -> [LuaValue]

  /// The limits applied to every later call.
  package var limits: LuaLimits {
    didSet {
      var cLimits = Self.cLimits(limits)
      mr_vm_set_limits(state, &cLimits)
      arguments.pointee.limit = limits.memoryBytes
      results.pointee.limit = limits.memoryBytes
    }
  }

  /// Bytes the VM holds now.
  package var memoryUsed: Int { mr_vm_memory(state) }

  let state: OpaquePointer
  private var hostFunctions: [HostFunction] = []
  private var scriptOfFunction: [Int64: String] = [:]
  // Behind pointers: the buffers are reused on every call, and stored properties would pay for
  // Swift's dynamic exclusivity checks on each access.
  private let arguments = UnsafeMutablePointer<mr_buf>.allocate(capacity: 1)
  let results = UnsafeMutablePointer<mr_buf>.allocate(capacity: 1)
  private var isCalling = false

  /// A VM whose `require` finds modules in `modulePaths` (searched in order) and nowhere else.
  /// Host libraries (`json`, `base64`, `hex`, `uuid`, `date`, `plist`) are registered unless
  /// `hostLibraries` is false.
  package init(limits: LuaLimits = LuaLimits(), modulePaths: [URL] = [], hostLibraries: Bool = true) throws(LuaError) {
    self.limits = limits
    // Values crossing either way count against the memory limit (LuaVM.encode, mr_read_value).
    var bounded = mr_buf()
    bounded.limit = limits.memoryBytes
    arguments.initialize(to: bounded)
    results.initialize(to: bounded)
    var cLimits = Self.cLimits(limits)
    // The VM is made before `self` is complete; the host pointer is set right after.
    guard let state = mr_vm_new(&cLimits, LuaVM.hostTrampoline, nil) else {
      throw LuaError(kind: .memoryLimit, message: "cannot create a Lua VM (out of memory)")
    }
    self.state = state
    Self.noteModules
    mr_vm_set_host(state, Unmanaged.passUnretained(self).toOpaque())
    for folder in modulePaths {
      try check(mr_vm_add_module_path(state, folder.standardizedFileURL.path), script: nil)
    }
    if hostLibraries { HostLibraries.register(in: self) }
  }

  /// Every module `require` opens is one of the command's inputs (`ReadFiles`): set once per process.
  private static let noteModules: Void = mr_set_file_opened { path, device, inode in
    guard let path else { return }
    ReadFiles.note(String(cString: path), device: UInt64(device), inode: UInt64(inode))
  }

  deinit {
    mr_vm_free(state)
    mr_buf_free(arguments)
    mr_buf_free(results)
    arguments.deallocate()
    results.deallocate()
  }

  /// Runs Lua text as a script named `name` (shown in messages as `name:LINE:`) in a fresh
  /// environment, and returns what it returns.
  @discardableResult
  package func run(source: String, name: String) throws(LuaError) -> [LuaValue] {
    try guardReentry()
    defer { isCalling = false }
    mr_buf_reset(results)
    let chunkName = "=" + name
    let status =
      source.utf8.withContiguousStorageIfAvailable { bytes in
        bytes.withMemoryRebound(to: CChar.self) { text in
          mr_vm_run(state, text.baseAddress, text.count, chunkName, results)
        }
      }
      ?? Array(source.utf8CString.dropLast()).withUnsafeBufferPointer { text in
        mr_vm_run(state, text.baseAddress, text.count, chunkName, results)
      }
    try check(status, script: name)
    return decodeResults(script: name)
  }

  /// Runs a script file. Its name in messages is `name`, or the path as given.
  @discardableResult
  package func run(file: URL, name: String? = nil) throws(LuaError) -> [LuaValue] {
    let scriptName = name ?? file.relativePath
    let source: String
    do {
      source = try InputFile.text(file)
    } catch let error as InputFileError {
      throw LuaError(kind: .file, message: error.reason, script: scriptName)
    } catch {
      throw LuaError(kind: .file, message: "cannot read the script (\(error.localizedDescription))", script: scriptName)
    }
    return try run(source: source, name: scriptName)
  }

  /// Calls a function a script returned, under ``limits``.
  @discardableResult
  package func call(_ function: LuaFunction, _ arguments: [LuaValue] = []) throws(LuaError) -> [LuaValue] {
    try withCallBuffers(function: function, values: arguments) { (arguments, results) in
      mr_vm_call(state, function.reference, arguments, results)
    }
  }

  /// Makes `body` callable from scripts as `module.name` (or the global `name`). Register before
  /// running the scripts that use it. `body` must not call back into this VM.
  package func register(_ name: String, in module: String? = nil, _ body: @escaping HostFunction) {
    hostFunctions.append(body)
    let id = Int32(hostFunctions.count - 1)
    let status = module.map { mr_vm_register(state, $0, name, id) } ?? mr_vm_register(state, nil, name, id)
    precondition(status == MR_OK, "registering a host function failed: \(String(cString: mr_vm_error(state)))")
  }

  /// Lets go of a function value the VM handed out (each function a call returns holds a reference
  /// until the VM is freed or it is released).
  package func release(_ function: LuaFunction) {
    guard function.vm == ObjectIdentifier(self) else { return }
    scriptOfFunction[function.reference] = nil
    mr_vm_unref(state, function.reference)
  }

  /// Runs a full garbage collection.
  package func collectGarbage() { mr_vm_collect(state) }

  /// The host holds `bytes` more for the scripts (negative: fewer) — a stage's selected keys — counted
  /// against the memory limit with the VM's own. False (nothing held) when the limit would be passed:
  /// the host function that asked then throws, and the call ends as the memory limit.
  package func hold(bytes: Int) -> Bool { mr_vm_hold(state, Int64(bytes)) == 0 }

  /// The call under way was handed `objects` new objects (from a host function: a stage's walk, a
  /// fetch): its budget grows by ``LuaLimits/instructionsPerObject`` and
  /// ``LuaLimits/secondsPerObject`` for each, and its time without progress starts again. What
  /// counts as new is the caller's to decide (a stage credits at most two passes over an entity).
  package func credit(objects: Int) { mr_vm_credit(state, Int64(objects)) }

  // MARK: - Non public

  /// Encodes `values`, runs `body` with the argument and result buffers, checks its status and
  /// decodes the results.
  func withCallBuffers(
    function: LuaFunction, values: [LuaValue],
    _ body: (UnsafeMutablePointer<mr_buf>, UnsafeMutablePointer<mr_buf>) -> mr_status
  ) throws(LuaError) -> [LuaValue] {
    guard function.vm == ObjectIdentifier(self) else {
      throw LuaError(kind: .badValue, message: "the function belongs to another Lua VM")
    }
    try guardReentry()
    defer { isCalling = false }
    let script = scriptOfFunction[function.reference]
    mr_buf_reset(arguments)
    for value in values {
      guard Self.encode(value, into: &arguments.pointee) else {
        throw LuaError(kind: .memoryLimit, message: "out of memory while passing arguments", script: script)
      }
    }
    mr_buf_reset(results)
    try check(body(arguments, results), script: script)
    return decodeResults(script: script)
  }

  func internKeys(_ keys: [String]) throws(LuaError) -> Int64 {
    var names = mr_buf()
    defer { mr_buf_free(&names) }
    for key in keys {
      guard Self.encode(.text(key), into: &names) else {
        throw LuaError(kind: .memoryLimit, message: "out of memory while preparing keys")
      }
    }
    var reference: Int64 = 0
    try check(mr_vm_keys(state, &names, &reference), script: nil)
    return reference
  }

  /// Runs `body` as a call into the VM (no host function may call back into it meanwhile).
  func guarded<T>(_ body: () throws(LuaError) -> T) throws(LuaError) -> T {
    try guardReentry()
    defer { isCalling = false }
    return try body()
  }

  /// Throws the error a row loop ended in, as for a call of `function`.
  func checkRowLoop(_ status: mr_status, function: LuaFunction) throws(LuaError) {
    try check(status, script: scriptOfFunction[function.reference])
  }

  /// The values a row loop handed back (in the results buffer).
  func resultValues(of function: LuaFunction) -> [LuaValue] {
    decodeResults(script: scriptOfFunction[function.reference])
  }

  private func guardReentry() throws(LuaError) {
    guard !isCalling else {
      throw LuaError(kind: .badValue, message: "a host function called back into its own Lua VM")
    }
    isCalling = true
  }

  private func check(_ status: mr_status, script: String?) throws(LuaError) {
    guard status != MR_OK else { return }
    let kind: LuaError.Kind =
      switch status {
      case MR_ERR_SYNTAX: .syntax
      case MR_ERR_INSTRUCTIONS: .instructionLimit
      case MR_ERR_MEMORY: .memoryLimit
      case MR_ERR_DEADLINE: .deadline
      case MR_ERR_RECURSION: .recursionLimit
      case MR_ERR_INPUT: .inputLimit
      case MR_ERR_VALUE: .badValue
      case MR_ERR_FILE: .file
      default: .runtime
      }
    let traceback = String(cString: mr_vm_traceback(state))
    throw LuaError(
      kind: kind, luaMessage: String(cString: mr_vm_error(state)), defaultScript: script,
      traceback: traceback.isEmpty ? nil : traceback)
  }

  private func decodeResults(script: String?) -> [LuaValue] {
    var decoded: [LuaValue] = []
    var position = 0
    while position < results.pointee.count {
      decoded.append(decode(&results.pointee, at: &position, script: script))
    }
    return decoded
  }

  private func decode(_ buffer: inout mr_buf, at position: inout Int, script: String?) -> LuaValue {
    let value = buffer.vals[position]
    position += 1
    switch Int(value.tag) {
    case Int(MR_FALSE.rawValue): return .boolean(false)
    case Int(MR_TRUE.rawValue): return .boolean(true)
    case Int(MR_INT.rawValue): return .integer(value.i)
    case Int(MR_NUM.rawValue): return .number(value.d)
    case Int(MR_STR.rawValue):
      guard value.len > 0, let bytes = buffer.bytes else { return .string([]) }
      return .string(Array(UnsafeRawBufferPointer(start: bytes + value.off, count: value.len)))
    case Int(MR_NULL.rawValue): return .null
    case Int(MR_FUNC.rawValue):
      if let script { scriptOfFunction[value.i] = script }
      return .function(LuaFunction(reference: value.i, vm: ObjectIdentifier(self)))
    case Int(MR_TABLE.rawValue):
      var pairs: [(LuaValue, LuaValue)] = []
      pairs.reserveCapacity(Int(value.count))
      for _ in 0..<value.count {
        let key = decode(&buffer, at: &position, script: script)
        pairs.append((key, decode(&buffer, at: &position, script: script)))
      }
      return .table(LuaTable(pairs: pairs))
    default: return .nil
    }
  }

  /// Appends `value` to `buffer`; false when out of memory.
  static func encode(_ value: LuaValue, into buffer: inout mr_buf) -> Bool {
    switch value {
    case .nil: return mr_buf_add(&buffer, Int32(MR_NIL.rawValue), 0, 0, 0, nil, 0) == 0
    case .boolean(let flag):
      return mr_buf_add(&buffer, Int32((flag ? MR_TRUE : MR_FALSE).rawValue), 0, 0, 0, nil, 0) == 0
    case .integer(let number): return mr_buf_add(&buffer, Int32(MR_INT.rawValue), 0, number, 0, nil, 0) == 0
    case .number(let number): return mr_buf_add(&buffer, Int32(MR_NUM.rawValue), 0, 0, number, nil, 0) == 0
    case .string(let bytes):
      return bytes.withUnsafeBytes {
        mr_buf_add(&buffer, Int32(MR_STR.rawValue), 0, 0, 0, $0.baseAddress, $0.count) == 0
      }
    case .null: return mr_buf_add(&buffer, Int32(MR_NULL.rawValue), 0, 0, 0, nil, 0) == 0
    case .function(let function):
      return mr_buf_add(&buffer, Int32(MR_FUNC.rawValue), 0, function.reference, 0, nil, 0) == 0
    case .table(let table):
      guard mr_buf_add(&buffer, Int32(MR_TABLE.rawValue), Int32(table.count), 0, 0, nil, 0) == 0 else { return false }
      for (index, element) in table.array.enumerated() {
        guard encode(.integer(Int64(index + 1)), into: &buffer), encode(element, into: &buffer) else { return false }
      }
      for (key, element) in table.fields {
        guard encode(key, into: &buffer), encode(element, into: &buffer) else { return false }
      }
      return true
    }
  }

  private static func cLimits(_ limits: LuaLimits) -> mr_limits {
    mr_limits(
      instructions: limits.instructions, memory: limits.memoryBytes, call_depth: Int32(clamping: limits.callDepth),
      seconds: limits.seconds, pattern_cost: limits.patternCost, seed: limits.randomSeed,
      instructions_per_object: limits.instructionsPerObject, seconds_per_object: limits.secondsPerObject)
  }

  private static let hostTrampoline: mr_host_fn = { host, id, arguments, results in
    guard let host, let arguments, let results else { return 1 }
    let vm = Unmanaged<LuaVM>.fromOpaque(host).takeUnretainedValue()
    return vm.callHost(Int(id), arguments, results)
  }

  private func callHost(_ id: Int, _ arguments: UnsafePointer<mr_buf>, _ results: UnsafeMutablePointer<mr_buf>) -> Int32
  {
    var input = arguments.pointee
    var values: [LuaValue] = []
    var position = 0
    while position < input.count {
      values.append(decode(&input, at: &position, script: nil))
    }
    do {
      for value in try hostFunctions[id](values) {
        guard Self.encode(value, into: &results.pointee) else {
          throw HostError(
            "the values returned exceed the memory limit of \(limits.memoryBytes) bytes (a table that shares "
              + "subtables is copied once per reference)")
        }
      }
      return 0
    } catch {
      mr_buf_reset(results)
      let message = Array(String(describing: error).utf8)
      _ = message.withUnsafeBytes { mr_buf_add(results, Int32(MR_STR.rawValue), 0, 0, 0, $0.baseAddress, $0.count) }
      return 1
    }
  }
}

/// An error a host function throws: its message becomes the Lua error's message.
package struct HostError: Error, CustomStringConvertible, Sendable {
  package let description: String

  package init(_ message: String) { description = message }
}
