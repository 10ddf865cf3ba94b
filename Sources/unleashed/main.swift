// `unleashed`: takes a picture through the daemon without starting the full program, and hands
// every other command line to the full program, `unleashed-full`, in this same process (exec).
// Why, and the grammar it answers itself: CommandCore's QuickShoot.
import CommandCore
import DaemonClient
import Foundation

let arguments = CommandLine.arguments
let environment = ProcessInfo.processInfo.environment
if let shoot = QuickShoot(arguments: Array(arguments.dropFirst()), environment: environment),
   let client = DaemonClient.commands(environment: environment),
   let status = await shoot.run(client) {
    exit(status)
}
FullProgram.exec(arguments)
