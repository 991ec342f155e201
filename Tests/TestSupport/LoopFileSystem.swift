import Foundation

/// A file system of another kind (XFS, Btrfs: ones that clone files) made in a sparse image file
/// and loop-mounted, for tests that need its behaviour. Needs root, `mkfs.<type>` (scripts/setup
/// installs xfsprogs) and loop devices; where any is missing `make` prints why and returns nil.
public struct LoopFileSystem: Sendable {
  public let mountPoint: URL

  private init(mountPoint: URL) {
    self.mountPoint = mountPoint
  }

  public static func make(_ type: String, megabytes: Int, in folder: TemporaryDirectory, test: String) throws
    -> LoopFileSystem?
  {
    let image = folder.url.appendingPathComponent("\(type).img")
    _ = FileManager.default.createFile(atPath: image.path, contents: nil)
    let handle = try FileHandle(forWritingTo: image)
    try handle.truncate(atOffset: UInt64(megabytes) << 20)
    try handle.close()
    let mountPoint = try folder.folder(type)
    for (tool, arguments) in [
      ("/usr/sbin/mkfs.\(type)", ["-q", "-f", image.path]),
      ("/bin/mount", ["-o", "loop", "-t", type, image.path, mountPoint.path]),
    ] {
      guard FileManager.default.isExecutableFile(atPath: tool) else {
        print("skipped \(test): \(tool) is not installed (scripts/setup installs it)")
        return nil
      }
      let status = try run(tool, arguments)
      guard status == 0 else {
        print(
          "skipped \(test): \(URL(fileURLWithPath: tool).lastPathComponent) exit \(status) (not root, or no loop devices)"
        )
        return nil
      }
    }
    return LoopFileSystem(mountPoint: mountPoint)
  }

  /// Unmounts it (the loop device goes with it).
  public func unmount() {
    _ = try? Self.run("/bin/umount", [mountPoint.path])
  }

  /// Free bytes on the file system, after `sync` (what the blocks written so far leave).
  public func freeBytes() throws -> Int64 {
    _ = try Self.run("/bin/sync", [])
    let attributes = try FileManager.default.attributesOfFileSystem(forPath: mountPoint.path)
    return (attributes[.systemFreeSize] as? NSNumber)?.int64Value ?? 0
  }

  private static func run(_ tool: String, _ arguments: [String]) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    return process.terminationStatus
  }
}
