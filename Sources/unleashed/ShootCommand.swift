import ArgumentParser
import CameraKit
import CommandCore
import JSON
import UnleashedKit

struct ShootCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shoot",
        abstract: "Take pictures and wait until the camera reports each one.",
        discussion: """
            Prints each picture's shot counter, the time from trigger to the camera's report, and \
            the camera's clock at the shot. With --count, pictures are taken one after another, \
            each as soon as the camera is ready; with --json each is one line of JSON as it is \
            taken. A failure stops the series; the pictures already taken have been printed.

            With --camera (repeated), --group or --all, every camera of the rig is fired at once \
            and each one's picture is printed, then the spread between the first and the last \
            command and between the first and the last report.
            """
    )

    @OptionGroup(title: GlobalOptions.title, visibility: .hidden) var options: GlobalOptions

    @OptionGroup(title: "Rig") var rig: RigOptions

    @Option(help: ArgumentHelp("How many pictures to take, one after another (1 to 10000).", valueName: "n"))
    var count = 1

    func validate() throws {
        guard ShotReport.counts.contains(count) else {
            throw ValidationError("--count must be between \(ShotReport.counts.lowerBound) and \(ShotReport.counts.upperBound)")
        }
    }

    func run() async throws {
        let (options, count) = (options, count)
        if rig.isRig {
            try await options.withRig(rig) { rig throws(ExitCode) in
                for _ in 0..<count {
                    if Task.isCancelled { throw ExitCode(Interrupt.exitStatus.rawValue) }
                    let (outcomes, spread) = await rig.shoot()
                    try options.report(outcomes, spread, json: Self.json, human: Self.human)
                }
            }
            return
        }
        try await options.withCamera { camera throws(CameraError) in
            try await ShotReport.series(of: count, on: camera) { shot in options.emit(Self.json(shot)) { Self.human(shot) } }
        }
    }

    static func json(_ shot: Shot) -> JSONValue { ShotReport.json(shot) }

    static func human(_ shot: Shot) -> String { ShotReport.text(shot) }
}
