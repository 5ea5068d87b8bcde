//! The dashboard's static files, compiled into the binary (plain HTML, CSS
//! and JavaScript: no build step).

/// The one HTML page; the script renders the view the path names.
pub const INDEX_HTML: &str = include_str!("../../assets/ui/index.html");
/// The page's script.
pub const APP_JS: &str = include_str!("../../assets/ui/app.js");
/// The page's style sheet.
pub const APP_CSS: &str = include_str!("../../assets/ui/app.css");
