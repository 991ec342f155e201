import Foundation

/// A tmpfs of a few hundred kilobytes, for tests of a full disk (mounting needs root; where it is not
/// allowed, tests skip with the reason printed).
public enum TinyFileSystem {
  /// A tmpfs of `size` ("512k") at `folder/tiny`, or `nil` (with the reason printed) where mounting
  /// is not allowed; ``unmount(_:)`` undoes it.
  public static func mount(_ size: String, in folder: TemporaryDirectory, test: String) throws -> URL? {
    let mountPoint = try folder.folder("tiny")
    let mount = Process()
    mount.executableURL = URL(fileURLWithPath: "/bin/mount")
    mount.arguments = ["-t", "tmpfs", "-o", "size=\(size)", "migrun-test", mountPoint.path]
    mount.standardError = FileHandle.nullDevice
    try mount.run()
    mount.waitUntilExit()
    guard mount.terminationStatus == 0 else {
      print("skipped \(test): mounting a tmpfs is not allowed here (mount exit \(mount.terminationStatus))")
      return nil
    }
    return mountPoint
  }

  public static func unmount(_ mountPoint: URL) {
    let unmount = Process()
    unmount.executableURL = URL(fileURLWithPath: "/bin/umount")
    unmount.arguments = [mountPoint.path]
    try? unmount.run()
    unmount.waitUntilExit()
  }
}
