import CTurboJPEG
import NIOCore
import NIOPosix
