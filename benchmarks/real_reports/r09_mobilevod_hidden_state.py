"""vikrant7/mobile-vod-bottleneck-lstm#25, "Runtime error of inplace operation":
https://github.com/vikrant7/mobile-vod-bottleneck-lstm/issues/25

Original code (train_mvod_lstm5.py, train(); network/mvod_lstm5.py, BottleneckLSTM):
    for i, data in enumerate(loader):
        images, boxes, labels = data
        for image, box, label in zip(images, boxes, labels):
            ...
            optimizer.zero_grad()
            confidence, locations = net(image)
            regression_loss, classification_loss = criterion(confidence, locations, label, box)
            loss = regression_loss + classification_loss
            loss.backward(retain_graph=True)
            optimizer.step()
            ...
        net.detach_hidden()

    def forward(self, input):
        new_h, new_c = self.cell(input, self.hidden_state, self.cell_state)
        self.hidden_state = new_h
        self.cell_state = new_c
        return self.hidden_state
The answer in the thread: the hidden state is detached only after the whole sequence, so the next
frame's backward runs into the previous frame's graph, whose weights optimizer.step() changed; call
net.detach_hidden() in the inner loop. One Bottleneck LSTM layer with small channels stands for the
MobileNet-SSD; `nn.ReLU6(x)` in the cell is written as F.relu6(x); the loss is reduced to MSE + CE.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BottleneckLSTMCell(nn.Module):
    def __init__(self, input_channels, hidden_channels):
        super(BottleneckLSTMCell, self).__init__()
        self.input_channels = int(input_channels)
        self.hidden_channels = int(hidden_channels)
        self.W = nn.Conv2d(self.input_channels, self.input_channels, kernel_size=3, groups=self.input_channels,
                           stride=1, padding=1)
        self.Wy = nn.Conv2d(int(self.input_channels + self.hidden_channels), self.hidden_channels, kernel_size=1)
        self.Wi = nn.Conv2d(self.hidden_channels, self.hidden_channels, 3, 1, 1, groups=self.hidden_channels,
                            bias=False)
        self.Wbi = nn.Conv2d(self.hidden_channels, self.hidden_channels, 1, 1, 0, bias=False)
        self.Wbf = nn.Conv2d(self.hidden_channels, self.hidden_channels, 1, 1, 0, bias=False)
        self.Wbc = nn.Conv2d(self.hidden_channels, self.hidden_channels, 1, 1, 0, bias=False)
        self.Wbo = nn.Conv2d(self.hidden_channels, self.hidden_channels, 1, 1, 0, bias=False)
        self.Wci = self.Wcf = self.Wco = None

    def forward(self, x, h, c):
        x = self.W(x)
        y = torch.cat((x, h), 1)  # concatenate input and hidden layers
        i = self.Wy(y)  # reduce to hidden layer size
        b = self.Wi(i)  # depth wise 3*3
        ci = torch.sigmoid(self.Wbi(b) + c * self.Wci)
        cf = torch.sigmoid(self.Wbf(b) + c * self.Wcf)
        cc = cf * c + ci * F.relu6(self.Wbc(b))
        co = torch.sigmoid(self.Wbo(b) + cc * self.Wco)
        ch = co * F.relu6(cc)
        return ch, cc

    def init_hidden(self, batch_size, hidden, shape):
        self.Wci = torch.zeros(1, hidden, shape[0], shape[1])
        self.Wcf = torch.zeros(1, hidden, shape[0], shape[1])
        self.Wco = torch.zeros(1, hidden, shape[0], shape[1])
        return torch.zeros(batch_size, hidden, shape[0], shape[1]), torch.zeros(batch_size, hidden, shape[0], shape[1])


class BottleneckLSTM(nn.Module):
    def __init__(self, input_channels, hidden_channels, height, width, batch_size):
        super(BottleneckLSTM, self).__init__()
        self.cell = BottleneckLSTMCell(input_channels, hidden_channels)
        (h, c) = self.cell.init_hidden(batch_size, hidden=hidden_channels, shape=(height, width))
        self.hidden_state = h
        self.cell_state = c

    def forward(self, input):
        new_h, new_c = self.cell(input, self.hidden_state, self.cell_state)
        self.hidden_state = new_h
        self.cell_state = new_c
        return self.hidden_state


class MobileVOD(nn.Module):
    def __init__(self, num_classes=3, batch_size=1):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.bottleneck_lstm1 = BottleneckLSTM(8, 4, height=4, width=4, batch_size=batch_size)
        self.classification_header = nn.Conv2d(4, num_classes, 1)
        self.regression_header = nn.Conv2d(4, 4, 1)

    def forward(self, x):
        x = self.bottleneck_lstm1(F.relu6(self.conv(x)))
        confidence = self.classification_header(x).flatten(2).transpose(1, 2)
        locations = self.regression_header(x).flatten(2).transpose(1, 2)
        return confidence, locations

    def detach_hidden(self):
        self.bottleneck_lstm1.hidden_state.detach_()
        self.bottleneck_lstm1.cell_state.detach_()


def criterion(confidence, locations, labels, boxes):
    return F.mse_loss(locations, boxes), F.cross_entropy(confidence.flatten(0, 1), labels.flatten())


def train(loader, net, criterion, optimizer):
    net.train(True)
    for i, data in enumerate(loader):
        images, boxes, labels = data
        for image, box, label in zip(images, boxes, labels):
            optimizer.zero_grad()
            confidence, locations = net(image)
            regression_loss, classification_loss = criterion(confidence, locations, label, box)
            loss = regression_loss + classification_loss
            loss.backward(retain_graph=True)
            optimizer.step()
        net.detach_hidden()


torch.manual_seed(0)
net = MobileVOD()
optimizer = torch.optim.RMSprop(net.parameters(), lr=0.003, momentum=0.9, weight_decay=5e-4)
frames = 3  # sequence_length
loader = [(torch.randn(frames, 1, 3, 8, 8), torch.randn(frames, 1, 16, 4), torch.randint(0, 3, (frames, 1, 16)))]
train(loader, net, criterion, optimizer)
print("trained")
