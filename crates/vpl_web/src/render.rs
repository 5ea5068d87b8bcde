//! Drawing a [`WebGlProgram`] in headless Chromium: the renderer page
//! (served by a [`Server`]) runs `vplRender` on the scene and returns the
//! pixels.

use crate::program::WebGlProgram;
use crate::scene::{Scene, scene_json};
use crate::server::Server;
use browser::{Browser, BrowserError, Options};
use vpl_gl::Image;

/// Why a WebGL render failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The scene does not fit the program (unknown uniform path, wrong
    /// value count, a texture for no sampler, a bad size).
    #[error("[webgl-scene] {0}")]
    Scene(String),
    /// The browser failed, or the page threw (shader compile/link errors
    /// come back as `browser-script` with the driver's log).
    #[error(transparent)]
    Browser(#[from] BrowserError),
    /// The loopback server could not start.
    #[error("[webgl-server] {0}")]
    Server(String),
}

/// A headless Chromium and the loopback server whose page it draws with.
pub struct WebGlRenderer {
    // Field order: the browser quits before the server stops.
    browser: Browser,
    server: Server,
}

impl WebGlRenderer {
    /// Starts the server on a free loopback port and the browser.
    pub fn start() -> Result<Self, RenderError> {
        let server = Server::start(([127, 0, 0, 1], 0).into())
            .map_err(|e| RenderError::Server(e.to_string()))?;
        let browser = Browser::start(&Options {
            width: 640,
            height: 480,
            ..Options::default()
        })?;
        browser.goto(&server.url("/render.html"))?;
        Ok(WebGlRenderer { browser, server })
    }

    /// The browser (for screenshots or scripts of one's own).
    pub fn browser(&self) -> &Browser {
        &self.browser
    }

    /// The server.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// Draws `scene` with `program` and reads the framebuffer back.
    pub fn render(&self, program: &WebGlProgram, scene: &Scene) -> Result<Image, RenderError> {
        let document = scene_json(program, scene).map_err(RenderError::Scene)?;
        let ready = self
            .browser
            .execute("return typeof vplRender;", Vec::new())?;
        if ready != "function" {
            self.browser.goto(&self.server.url("/render.html"))?;
        }
        let result = self.browser.execute(
            "return vplRender(document.getElementById('view'), arguments[0]);",
            vec![document],
        )?;
        let pixels = browser::pixels_from_json(&result)?;
        Ok(Image {
            width: pixels.width,
            height: pixels.height,
            rgba: pixels.rgba,
        })
    }

    /// Quits the browser and stops the server.
    pub fn quit(self) -> Result<(), RenderError> {
        let WebGlRenderer { browser, server } = self;
        let quit = browser.quit();
        drop(server);
        quit.map_err(RenderError::from)
    }
}
