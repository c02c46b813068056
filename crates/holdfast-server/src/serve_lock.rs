//! One `holdfast serve` per SQLite database: the engine's guarantees on SQLite (one
//! writer queue, group commit, the scheduled passes run once) hold within one process.
//! `serve` holds an exclusive advisory lock (`flock`) on `FILE.serve.lock` beside the
//! database for as long as it runs, the file naming its process id; a second `serve` on
//! the same file is refused, naming that process. The lock ends with the process, however
//! it ends (the file stays, unlocked: deleting it would let a third process lock a new
//! file while the second still holds the old one). PostgreSQL takes any number of
//! `serve` processes and needs no lock. The operator CLI takes none either: its
//! commands run beside `serve` as any client of the database does.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read as _, Seek as _, Write as _};
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The lock, held while this value lives.
#[derive(Debug)]
pub struct ServeLock {
    _file: File,
}

/// The lock file of a SQLite database file: `FILE.serve.lock`.
pub fn lock_path(database: &Path) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push(".serve.lock");
    PathBuf::from(name)
}

/// Takes the lock of the database `url` names when it is a SQLite file (`None` for
/// PostgreSQL and in-memory databases); refused while another process holds it.
pub fn take(url: &str) -> anyhow::Result<Option<ServeLock>> {
    let Some(database) = holdfast::sqlite_file(url) else {
        return Ok(None);
    };
    let path = lock_path(&database);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .with_context(|| format!("opening the lock file {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => anyhow::bail!(
            "another holdfast serve{} is running on {}: one serve per SQLite database (its lock: {})",
            holder(&mut file),
            database.display(),
            path.display()
        ),
        Err(TryLockError::Error(e)) => {
            return Err(e).with_context(|| format!("locking {}", path.display()));
        }
    }
    write_pid(&mut file).with_context(|| format!("writing {}", path.display()))?;
    Ok(Some(ServeLock { _file: file }))
}

/// ` (pid N)` when the lock file names its holder.
fn holder(file: &mut File) -> String {
    let mut text = String::new();
    match file.read_to_string(&mut text) {
        Ok(_) if text.trim().parse::<u32>().is_ok() => format!(" (pid {})", text.trim()),
        _ => String::new(),
    }
}

fn write_pid(file: &mut File) -> std::io::Result<()> {
    file.set_len(0)?;
    file.rewind()?;
    writeln!(file, "{}", std::process::id())?;
    file.flush()
}
